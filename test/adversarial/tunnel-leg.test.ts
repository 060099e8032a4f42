import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitRandomFiles, GIT_IDENTITY, killPushMidTransfer } from '../helpers/interrupted-push.js';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * The router's HTTP/1.1 tunnel leg (its default, as gitlab-shell) against the real bridge, when the
 * other side misbehaves: the bridge refusing a push in the middle of its body (its response ends
 * while the router is still sending), and the SSH client vanishing mid-push (the router drops the
 * tunnel's connection; the bridge must see its client gone and end the Gitaly call).
 */
const LIMIT = 3 * 1024 * 1024;
let stack: RunningStack;
let work: string;

beforeAll(async () => {
  stack = await startStack({ env: { BRIDGE_MAX_RECEIVE_PACK_BYTES: String(LIMIT) } });
  work = mkdtempSync(join(tmpdir(), 'adversarial-leg-'));
});
afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const git = (args: string[], timeoutMs = 120_000) =>
  run('git', args, { env: { ...stack.gitEnv('alice'), ...GIT_IDENTITY }, timeoutMs });

const refs = (path: string) =>
  runOk('git', [
    '--git-dir',
    stack.project(path).repository,
    'for-each-ref',
    '--format=%(objectname) %(refname)',
  ]);

let seq = 0;
async function clone(): Promise<string> {
  const dir = join(work, `clone-${++seq}`);
  const r = await git(['clone', '-q', stack.url('my-company/my-project'), dir]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return dir;
}

describe('the HTTP/1.1 tunnel leg under a hostile peer', () => {
  it('the bridge refusing a push mid-body: git reads the refusal, no ref changes, the next clone works', async () => {
    const before = await refs('my-company/my-project');
    const dir = await clone();
    await commitRandomFiles(dir, 'over-limit', 8);
    const pushed = await git(['-C', dir, 'push', 'origin', 'over-limit']);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain(`push is larger than the limit of ${LIMIT} bytes`);
    expect(await refs('my-company/my-project')).toBe(before);
    await clone();
  });

  it('a pushing client killed mid-transfer: the bridge ends the Gitaly call, no ref changes', async () => {
    const before = await refs('my-company/my-project');
    const dir = await clone();
    await commitRandomFiles(dir, 'interrupted', 2);
    await killPushMidTransfer(stack, 'alice', dir, 'interrupted', 5_000);
    expect(await refs('my-company/my-project')).toBe(before);
    await clone();
  });
});
