/**
 * The kit's expectations per edge (`conformance/profiles.ts`) and when it runs its long edge cases
 * (`conformance/long-cases.ts`): behind `cloudflare` an old profile is expected to FAIL the long
 * cases of what broke the rollouts; behind `none` they are not expected (they do not run); a long
 * case runs on a scaled edge, with `--long` or `--only`, and is "not run" otherwise.
 */
import { describe, expect, it } from 'vitest';
import type { ConformanceCheck } from '../../conformance/check.js';
import { slowClonePlan } from '../../conformance/checks/edge-long.js';
import { CHECKS } from '../../conformance/checks/index.js';
import { skipLongCase } from '../../conformance/long-cases.js';
import { expectedFails } from '../../conformance/profiles.js';
import type { StackJson } from '../../lib/contracts/stack.js';

describe('expected FAILs per edge', () => {
  it.each([
    ['gitlab-shell-14.56', 'cloudflare', ['S12-shape', 'S12', 'S13-shape', 'S13-long', 'S13-lfs']],
    ['gitlab-shell-14.57.2', 'cloudflare', ['S12-shape', 'S12', 'S13-shape', 'S13-long', 'S13-lfs']],
    ['gitlab-shell-14.57.3', 'cloudflare', ['S13-shape', 'S13-long', 'S13-lfs']],
    ['gitlab-shell-14.57.4', 'cloudflare', ['S13-jwt', 'S13-lfs']],
    ['gitlab-shell-14.57.4', 'none', ['S13-jwt', 'S13-lfs']],
    ['gitlab-shell-14.57.6', 'cloudflare', []],
    ['gitlab-shell-14.56', 'none', ['S12-shape', 'S13-shape']],
    ['gitlab-shell-14.57.3', 'none', ['S13-shape']],
    ['gitlab-shell-14.56', 'haproxy', ['S12-shape', 'S13-shape', 'S13-long', 'S13-lfs']],
    ['gitlab-shell-14.57.2', '/some/edge.json', ['S12-shape', 'S13-shape']],
  ] as const)('%s behind %s: %j', (profile, edge, want) => {
    expect([...expectedFails(profile, edge)].sort()).toEqual([...want].sort());
  });
});

const stackBehind = (idleTimeoutMs: number, idleBodyTimeoutMs: number) =>
  ({ edge: { kind: 'cloudflare', figures: { idleTimeoutMs, idleBodyTimeoutMs } } }) as unknown as StackJson;
const long = { id: 'S13-long', long: true } as ConformanceCheck;

describe('when a long case runs', () => {
  it('runs on a scaled edge (every wait ≤ 20 s), with --long, or when --only names it', () => {
    expect(skipLongCase(long, stackBehind(1500, 6000), {})).toBeUndefined();
    expect(skipLongCase(long, stackBehind(15_000, 60_000), { long: true })).toBeUndefined();
    expect(skipLongCase(long, stackBehind(15_000, 60_000), { only: ['S13-long'] })).toBeUndefined();
    expect(skipLongCase({ ...long, long: false }, stackBehind(15_000, 60_000), {})).toBeUndefined();
  });

  it('is "not run", with the wait and the way to run it, behind unscaled figures', () => {
    expect(skipLongCase(long, stackBehind(15_000, 60_000), {})).toEqual({
      kind: 'not-run',
      why: expect.stringMatching(/waits 90 s \(run with --long, --only S13-long/),
    });
  });

  it("S13-lfs waits out the router's Shell JWT TTL and Rails' leeway whatever the edge: never in the short set", () => {
    const lfs = CHECKS.find((c) => c.id === 'S13-lfs') as ConformanceCheck;
    const ours = { ssh: '127.0.0.1:1', ours: true };
    const world = { ...stackBehind(1500, 6000), router: { ...ours, http: 'x', shellJwtTtlSeconds: 5 } };
    expect(lfs.waitMs?.(world as StackJson, ours)).toBe(66_500);
    expect(lfs.waitMs?.(world as StackJson, { ssh: '10.0.0.1:22', ours: false })).toBe(121_500);
    expect(skipLongCase(lfs, world as StackJson, {}, ours)).toEqual({
      kind: 'not-run',
      why: 'a long case: against this router it waits 67 s (run with --long or --only S13-lfs)',
    });
    expect(skipLongCase(lfs, world as StackJson, { only: ['S13-lfs'] }, ours)).toBeUndefined();
  });

  it("S12's pack outlasts the edge's idle body at the reader's rate, plus what the pipes hold", () => {
    for (const idleBody of [6000, 60_000]) {
      const { bytes, rate } = slowClonePlan(idleBody);
      expect(rate).toBeGreaterThanOrEqual(256 * 1024);
      expect(rate).toBeLessThanOrEqual(3 * 1024 * 1024);
      expect((bytes - 10 * 1024 * 1024) / rate).toBeCloseTo((1.3 * idleBody) / 1000, 1);
    }
  });
});
