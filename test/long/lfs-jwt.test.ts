/**
 * S13-lfs can fail (README "Every check can fail", gitlab!257493): a push whose pre-push hook uploads
 * an LFS object with Debian's git-lfs and then outlasts request 1's Shell JWT (`exp` + Rails' 60 s of
 * leeway), as a user runs it — `gitlab-cells-ssh conformance --profile P --only S13-lfs`, the kit's own
 * world (edge none, routers' `shellJwtTtlSeconds` 5). Our router on gitlab-shell 14.57.4 reuses
 * request 1's token for request 2: the cell's 404, git's "Not found" (an expected FAIL of that profile,
 * so exit 0); on 14.57.6 each request carries a fresh token: PASS. The two runs share the machine (each
 * mostly waits in its hook).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../../conformance/runner.js';
import { run } from '../helpers/run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'lfs-jwt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function kit(profile: string) {
  const json = join(dir, `${profile}.json`);
  const r = await run(
    'node',
    [CLI, 'conformance', '--profile', profile, '--only', 'S13-lfs', '--json', json],
    { timeoutMs: 200_000 },
  );
  const out = `${profile} exit ${r.code}\n${r.stdout}${r.stderr}`;
  expect(r.code, out).toBe(0);
  const report = JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport;
  return { out, result: report.results.find((x) => x.id === 'S13-lfs') };
}

describe.skipIf(!existsSync('/usr/bin/git-lfs'))('S13-lfs: an LFS upload in the pre-push hook', () => {
  it('14.57.4 FAILS it with git\'s "Not found"; 14.57.6 passes it', { timeout: 240_000 }, async () => {
    const [old, fresh] = await Promise.all([kit('gitlab-shell-14.57.4'), kit('gitlab-shell-14.57.6')]);
    expect(old.result?.expected, old.out).toBe(true);
    expect(old.result?.verdict, old.out).toEqual({
      kind: 'fail',
      seen: expect.stringMatching(
        /^push exited 128: remote: ERROR: cells routing: receive-pack response: Not found \| .*hung up/,
      ),
    });
    expect(fresh.result?.verdict, fresh.out).toEqual({ kind: 'pass' });
    // The hook waited out the token: TTL 5 s + 60 s of leeway, and more.
    expect(fresh.result?.durationMs, fresh.out).toBeGreaterThan(65_000);
  });
});
