import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TunnelProfileName } from '../../lib/contracts/tunnel-profile.js';
import { SHELL_HEADER } from '../../lib/jwt.js';
import { collect, gitViaSsh, remoteUrl } from '../test-support/clients.js';
import type { RecordedRequest } from '../test-support/fake-cell.js';
import { git } from '../test-support/git-repos.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * Each gitlab-shell release profile's tunnel shape, as a cell sees it (real OpenSSH and git → the
 * router with `tunnelProfile` → fake cells running real git): a protocol v0 clone's upload-pack body
 * with or without the flush-pkt added after `done`; a push in one request or in two (`0000`, then
 * the pack); one Shell JWT per command or a fresh one per request.
 */
const PROJECT = 'my-company/my-project';
const stacks = new Map<TunnelProfileName, TestStack>();

async function stackFor(profile: TunnelProfileName): Promise<TestStack> {
  let stack = stacks.get(profile);
  if (!stack) {
    stack = await startTestStack({ tunnelProfile: profile });
    await stack.addProject(PROJECT, 'cell_eu0', { 'README.md': 'profiles\n' });
    stacks.set(profile, stack);
  }
  return stack;
}

afterAll(async () => {
  await Promise.all([...stacks.values()].map((s) => s.close()));
});

const tunnels = (stack: TestStack, endpoint: string, since: number): RecordedRequest[] =>
  stack
    .cell('cell_eu0')
    .requests.slice(since)
    .filter((r) => r.path.endsWith(`/${endpoint}`));

async function cloneV0(stack: TestStack): Promise<RecordedRequest> {
  const since = stack.cell('cell_eu0').requests.length;
  const dest = mkdtempSync(join(stack.dir, 'clone-'));
  const res = await collect(
    gitViaSsh(stack.alice.privateKey, stack.sshPort, [
      '-c',
      'protocol.version=0',
      'clone',
      remoteUrl(stack.sshPort, PROJECT),
      join(dest, 'w'),
    ]),
  );
  expect(res.code, res.stderr).toBe(0);
  const [fetch] = tunnels(stack, 'ssh-upload-pack', since);
  if (!fetch) throw new Error('no upload-pack tunnel');
  return fetch;
}

/** Clones, commits, and pushes a new branch with a pre-push hook that sleeps `hookSeconds`. */
async function push(stack: TestStack, hookSeconds: number): Promise<RecordedRequest[]> {
  const dest = join(mkdtempSync(join(stack.dir, 'push-')), 'w');
  const cloned = await collect(
    gitViaSsh(stack.alice.privateKey, stack.sshPort, ['clone', remoteUrl(stack.sshPort, PROJECT), dest]),
  );
  expect(cloned.code, cloned.stderr).toBe(0);
  writeFileSync(join(dest, 'new.txt'), `${Math.random()}\n`);
  await git(['add', 'new.txt'], { cwd: dest });
  await git(['commit', '-q', '-m', 'profile push'], { cwd: dest });
  mkdirSync(join(dest, '.git', 'hooks'), { recursive: true });
  const hook = join(dest, '.git', 'hooks', 'pre-push');
  writeFileSync(hook, `#!/bin/sh\ncat >/dev/null\nsleep ${hookSeconds}\n`);
  chmodSync(hook, 0o755);
  const since = stack.cell('cell_eu0').requests.length;
  const branch = `b-${Math.random().toString(36).slice(2)}`;
  const res = await collect(
    gitViaSsh(stack.alice.privateKey, stack.sshPort, ['push', 'origin', `HEAD:refs/heads/${branch}`], {
      cwd: dest,
    }),
  );
  expect(res.code, res.stderr).toBe(0);
  return tunnels(stack, 'ssh-receive-pack', since);
}

describe('tunnel profiles: the upload-pack body of a protocol v0 clone', () => {
  it.each<TunnelProfileName>(['gitlab-shell-14.56', 'gitlab-shell-14.57.2'])(
    '%s forwards stdin as it is (no flush after done)',
    async (profile) => {
      const fetch = await cloneV0(await stackFor(profile));
      expect(fetch.body.subarray(-9).toString()).toBe('0009done\n');
    },
  );

  it.each<TunnelProfileName>(['gitlab-shell-14.57.3', 'gitlab-shell-14.57.4', 'gitlab-shell-14.57.6'])(
    '%s ends the body after done with a flush-pkt',
    async (profile) => {
      const fetch = await cloneV0(await stackFor(profile));
      expect(fetch.body.subarray(-13).toString()).toBe('0009done\n0000');
      expect(fetch.bodyEnded).toBe(true);
    },
  );
});

describe('tunnel profiles: push', () => {
  it.each<TunnelProfileName>(['gitlab-shell-14.56', 'gitlab-shell-14.57.3'])(
    '%s pushes in one streaming receive-pack request',
    async (profile) => {
      const requests = await push(await stackFor(profile), 0);
      expect(requests).toHaveLength(1);
      expect(requests[0]?.body.length).toBeGreaterThan(4);
      expect(requests[0]?.exitCode).toBe(0);
    },
  );

  it('gitlab-shell-14.57.4 pushes in two requests with one JWT for both', async () => {
    const requests = await push(await stackFor('gitlab-shell-14.57.4'), 1.5);
    expect(requests.map((r) => r.body.length > 4 || r.body.toString())).toEqual(['0000', true]);
    const [first, second] = requests.map((r) => r.headers[SHELL_HEADER]);
    expect(second).toBe(first);
  });

  it('gitlab-shell-14.57.6 pushes in two requests, each with a freshly signed JWT', async () => {
    const requests = await push(await stackFor('gitlab-shell-14.57.6'), 1.5);
    expect(requests.map((r) => r.body.length > 4 || r.body.toString())).toEqual(['0000', true]);
    const [first, second] = requests.map((r) => r.headers[SHELL_HEADER]);
    expect(second).not.toBe(first);
    expect(requests.every((r) => r.glId === 'user-2')).toBe(true);
  });
});

describe('setting shellJwtTtlSeconds', () => {
  const claims = (jwt: string | string[] | undefined) =>
    JSON.parse(Buffer.from(String(jwt).split('.')[1] ?? '', 'base64url').toString()) as {
      iat: number;
      exp: number;
    };

  it("signs every tunnel request's Shell JWT for that many seconds (default 60)", async () => {
    const short = await startTestStack({ shellJwtTtlSeconds: 5 });
    try {
      await short.addProject(PROJECT, 'cell_eu0', { 'README.md': 'ttl\n' });
      const requests = [await cloneV0(short), ...(await push(short, 0))];
      expect(requests.map((r) => claims(r.headers[SHELL_HEADER])).map((c) => c.exp - c.iat)).toEqual([
        5, 5, 5,
      ]);
    } finally {
      await short.close();
    }
    const [usual] = await push(await stackFor('gitlab-shell-14.57.6'), 0);
    const c = claims(usual?.headers[SHELL_HEADER]);
    expect(c.exp - c.iat).toBe(60);
  });
});
