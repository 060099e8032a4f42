import { describe, expect, it } from 'vitest';
import { median, mibPerSecond, percentile, ratio, summarize } from './stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose

  it('picks the smallest sample covering p % of the set', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0.5)).toBe(1);
  });

  it('rounds the rank up on small sets', () => {
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 51)).toBe(30);
    expect(percentile([7], 99)).toBe(7);
  });

  it('does not reorder the caller’s array', () => {
    const xs = [3, 1, 2];
    percentile(xs, 50);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('has no value for an empty set and refuses p outside (0, 100]', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('median and summarize', () => {
  it('averages the two middle values of an even set', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, 1, 3])).toBe(3);
    expect(median([])).toBeUndefined();
  });

  it('summarizes 200 latencies', () => {
    const xs = Array.from({ length: 200 }, (_, i) => i + 1);
    expect(summarize(xs)).toEqual({
      count: 200,
      min: 1,
      p50: 100,
      p95: 190,
      p99: 198,
      max: 200,
      mean: 100.5,
    });
    expect(summarize([])).toBeUndefined();
  });
});

describe('ratio and throughput', () => {
  it('divides only defined, positive denominators', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeUndefined();
    expect(ratio(undefined, 2)).toBeUndefined();
    expect(ratio(3, Number.NaN)).toBeUndefined();
  });

  it('turns bytes and milliseconds into MiB/s', () => {
    expect(mibPerSecond(512 * 1024 * 1024, 2000)).toBe(256);
    expect(mibPerSecond(1, 0)).toBeUndefined();
  });
});
