import { describe, expect, it } from 'vitest';
import { defineError } from './errors.js';
import { failureOutcome, isSliFailure, OUTCOMES } from './outcome.js';

describe('failureOutcome', () => {
  const Denied = defineError('X_DENIED', 403);
  const Unreachable = defineError('X_UNREACHABLE', 502);

  it('classifies policy, system and cancelled failures', () => {
    expect(failureOutcome(Denied('no'))).toBe('policy');
    expect(failureOutcome(Unreachable('down'))).toBe('system');
    expect(failureOutcome(new Error('bug'))).toBe('system');
    expect(failureOutcome('thrown string')).toBe('system');
    expect(failureOutcome(Unreachable('down'), true)).toBe('client-gone');
  });

  it('only system failures count against the SLI', () => {
    expect(OUTCOMES.filter(isSliFailure)).toEqual(['system']);
  });
});
