import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { notFoundDelay } from './front.js';

describe('notFoundDelay', () => {
  it('is off without a range', () => {
    expect(notFoundDelay(undefined, () => 0.5)).toBe(0);
  });

  it('covers both ends of the range', () => {
    expect(notFoundDelay([50, 250], () => 0)).toBe(50);
    expect(notFoundDelay([50, 250], () => 0.999_999_9)).toBe(250);
    expect(notFoundDelay([7, 7], () => 0.5)).toBe(7);
  });

  it('stays inside [min, max] for every random value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (a, b, r) => {
          const [min, max] = a <= b ? [a, b] : [b, a];
          const delay = notFoundDelay([min, max], () => r);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(min);
          expect(delay).toBeLessThanOrEqual(max);
        },
      ),
    );
  });
});
