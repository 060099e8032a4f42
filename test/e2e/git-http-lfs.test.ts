import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * Git LFS (Debian's git-lfs) through the demo stack: the batch API of the owning cell (found by
 * the router from the path), uploads through the bridge's `gitlab-lfs/objects/<oid>/<size>` row
 * (authorize → body to disk → finalize), downloads from the cell's disk, over HTTP and with the
 * href of SSH's `git-lfs-authenticate`.
 */
let stack: RunningStack;
let work: string;
const PROJECT = 'my-company/my-project';
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Alice',
  GIT_AUTHOR_EMAIL: 'alice@example.com',
  GIT_COMMITTER_NAME: 'Alice',
  GIT_COMMITTER_EMAIL: 'alice@example.com',
};
const hasLfs = existsSync('/usr/bin/git-lfs');

beforeAll(async () => {
  if (!hasLfs) return;
  stack = await startStack();
  work = mkdtempSync(join(stack.dataDir, 'lfs-'));
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

function git(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return run('git', args, {
    cwd,
    env: { ...stack.gitEnv('alice'), ...IDENTITY, GIT_TERMINAL_PROMPT: '0', ...env },
    timeoutMs: 60_000,
  });
}

function httpUrl(): string {
  return `http://alice:alice-password@${new URL(stack.json.router.http).host}/${PROJECT}.git`;
}

async function ok(p: ReturnType<typeof git>) {
  const r = await p;
  expect(r.stderr).not.toMatch(/fatal|error:/i);
  expect(r.code).toBe(0);
  return r;
}

describe.skipIf(!hasLfs)('git lfs through the router', () => {
  const blob = randomBytes(3 * 1024 * 1024);
  let oid = '';

  it('git lfs push stores the object on the owning cell’s disk; a fresh clone pulls it back', async () => {
    const src = join(work, 'src');
    await ok(git(['clone', httpUrl(), src], work));
    await ok(git(['lfs', 'install', '--local'], src));
    await ok(git(['lfs', 'track', '*.bin'], src));
    writeFileSync(join(src, 'big.bin'), blob);
    await ok(git(['add', '.gitattributes', 'big.bin'], src));
    await ok(git(['commit', '-qm', 'lfs object'], src));
    await ok(git(['push', 'origin', 'HEAD:refs/heads/lfs'], src));
    oid = (await git(['lfs', 'ls-files', '--long'], src)).stdout.toString().split(' ')[0] ?? '';
    expect(oid).toMatch(/^[0-9a-f]{64}$/);
    const eu0 = stack.json.cells.find((c) => c.name === 'cell_eu0');
    const stored = join(eu0?.storage ?? '', '@lfs-objects', oid.slice(0, 2), oid.slice(2, 4), oid.slice(4));
    expect(readFileSync(stored).equals(blob)).toBe(true);

    const dst = join(work, 'dst');
    await ok(git(['clone', '--branch', 'lfs', httpUrl(), dst], work, { GIT_LFS_SKIP_SMUDGE: '1' }));
    expect(readFileSync(join(dst, 'big.bin'), 'utf8')).toContain('version https://git-lfs');
    await ok(git(['lfs', 'install', '--local'], dst));
    await ok(git(['lfs', 'pull'], dst));
    expect(readFileSync(join(dst, 'big.bin')).equals(blob)).toBe(true);
  });

  it('over SSH: git-lfs-authenticate’s href and token fetch the object through the router', async () => {
    const dst = join(work, 'ssh');
    await ok(git(['clone', '--branch', 'lfs', stack.url(PROJECT), dst], work, { GIT_LFS_SKIP_SMUDGE: '1' }));
    await ok(git(['lfs', 'install', '--local'], dst));
    await ok(git(['lfs', 'pull'], dst));
    expect(readFileSync(join(dst, 'big.bin')).equals(blob)).toBe(true);
  });
});
