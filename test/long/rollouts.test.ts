/**
 * The result that proves the kit (README "The rollouts, reproduced"): GitLab's rollout history
 * through a real edge, as a user runs it — `gitlab-cells-ssh conformance --edge cloudflare
 * --edge-time-scale 0.1 --profile P --only S12,S13-long` for each profile. Our router on 14.56 and
 * 14.57.2 FAILS the idle-body clone (S12) and on 14.57.3 passes it; on ≤ 14.57.3 it FAILS the push
 * through a long pre-push hook (S13-long) and on 14.57.4 passes it. Every FAIL is one the profile is
 * expected to give behind cloudflare (`conformance/profiles.ts`), so each run exits 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../../conformance/runner.js';
import { run } from '../helpers/run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'rollouts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What GitLab's rollouts saw, per profile: S12 and S13-long. */
const TABLE: Array<[string, { S12: string; 'S13-long': string }]> = [
  ['gitlab-shell-14.56', { S12: 'expected FAIL', 'S13-long': 'expected FAIL' }],
  ['gitlab-shell-14.57.2', { S12: 'expected FAIL', 'S13-long': 'expected FAIL' }],
  ['gitlab-shell-14.57.3', { S12: 'pass', 'S13-long': 'expected FAIL' }],
  ['gitlab-shell-14.57.4', { S12: 'pass', 'S13-long': 'pass' }],
];

const verdictOf = (r: ConformanceReport['results'][number]) =>
  r.expected ? 'expected FAIL' : r.verdict.kind;

describe('the rollouts reproduced behind --edge cloudflare ×0.1', () => {
  it('14.56/14.57.2 FAIL S12 and 14.57.3 passes it; ≤ 14.57.3 FAIL S13-long and 14.57.4 passes it', {
    timeout: 240_000,
  }, async () => {
    const seen: Record<string, Record<string, string>> = {};
    const out: string[] = [];
    for (const [profile] of TABLE) {
      const json = join(dir, `${profile}.json`);
      const r = await run(
        'node',
        [
          CLI,
          'conformance',
          '--edge',
          'cloudflare',
          '--edge-time-scale',
          '0.1',
          '--profile',
          profile,
          '--only',
          'S12,S13-long',
          '--json',
          json,
        ],
        { timeoutMs: 120_000 },
      );
      out.push(`${profile} exit ${r.code}\n${r.stdout}${r.stderr}`);
      expect(r.code, out.join('\n')).toBe(0);
      const report = JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport;
      expect(report.edge).toBe('cloudflare');
      seen[profile] = Object.fromEntries(report.results.map((x) => [x.id, verdictOf(x)]));
    }
    expect(seen, out.join('\n')).toEqual(Object.fromEntries(TABLE));
    // What was seen: the edge closed the tunnel (git's and gitlab-shell's texts).
    expect(out[0]).toMatch(/S12 +expected FAIL[\s\S]*early EOF|unexpected disconnect/);
    expect(out[0]).toMatch(/S13-long +expected FAIL[\s\S]*Remote repository is unavailable/);
  });
});
