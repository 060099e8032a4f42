/**
 * The conformance kit's short checks behind real edges, as a user runs them:
 * `gitlab-cells-ssh conformance --edge nginx` (and `haproxy`) starts the kit's own world with that
 * edge between the topology router and every cell; every check passes (S3, S17, H4, H12 known divergences;
 * S3-cert, the long cases and H6 without a routes snapshot not run) and
 * the report names the edge. The world's stack.json says which edge ran and where.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../test/helpers/run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'kit-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(['nginx', 'haproxy'])('the conformance kit behind --edge %s', (edge) => {
  it('passes every short check through the edge (S3, S17, H4, H12 known divergences; S3-cert, H6 and the long S12, S13-long, S13-lfs not run)', {
    timeout: 240_000,
  }, async () => {
    const json = join(dir, `${edge}.json`);
    const r = await run('node', [CLI, 'conformance', '--edge', edge, '--json', json], { timeoutMs: 230_000 });
    expect(r.stdout).toMatch(new RegExp(`\\d+ checks, 0 failed \\(profile [^,]+, edge ${edge}\\)`));
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      edge: string;
      results: Array<{ id: string; verdict: { kind: string } }>;
    };
    expect(report.edge).toBe(edge);
    const notPassed = report.results
      .filter((x) => x.verdict.kind !== 'pass')
      .map((x) => [x.id, x.verdict.kind]);
    // S12 and S13-long wait about the edge's timeouts (60 s, 90 s unscaled) and S13-lfs the Shell
    // JWT's TTL and leeway: long cases, not run without --long; H6 needs a routes snapshot
    // (--routes); S20 runs behind any edge and passes.
    expect(notPassed).toEqual([
      ['S3', 'divergence'],
      ['S3-cert', 'not-run'],
      ['S12', 'not-run'],
      ['S13-long', 'not-run'],
      ['S13-lfs', 'not-run'],
      ['S17', 'divergence'],
      ['H4', 'divergence'],
      ['H6', 'not-run'],
      ['H12', 'divergence'],
    ]);
  });
});
