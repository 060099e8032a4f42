import { describe, expect, it } from 'vitest';
import { RestartPolicy } from './restart-policy.js';

const options = { firstDelayMs: 500, maxDelayMs: 10_000, stableMs: 30_000, maxAttempts: 8 };

describe('RestartPolicy', () => {
  it('doubles the delay for each death in a row, capped, and gives up after the last attempt', () => {
    const policy = new RestartPolicy(options);
    const delays = Array.from({ length: 8 }, () => policy.onDeath('bridge', 1_000)?.delayMs);
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
    expect(policy.onDeath('bridge', 1_000)).toBeUndefined();
  });

  it('starts over once the service stayed up for the stable time, and counts each service alone', () => {
    const policy = new RestartPolicy(options);
    policy.onDeath('bridge', 0);
    policy.onDeath('bridge', 0);
    expect(policy.onDeath('gitaly', 0)).toEqual({ attempt: 1, delayMs: 500 });
    expect(policy.onDeath('bridge', 29_999)).toEqual({ attempt: 3, delayMs: 2_000 });
    expect(policy.onDeath('bridge', 30_000)).toEqual({ attempt: 1, delayMs: 500 });
  });
});
