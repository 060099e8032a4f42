import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeExitStatus, encodeFrame, ResponseFrame } from '../../lib/framing.js';
import { waitUntil } from '../../test/helpers/poll.js';
import { collect, ssh } from '../test-support/clients.js';
import { errorFrames } from '../test-support/fake-cell.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/** What the SSH user sees when the tunnel fails, and what the cell sees when the user leaves. */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await Promise.all([
    stack.addProject('acme/broken', 'cell_eu0'),
    stack.addProject('acme/app', 'cell_eu0'),
    stack.addProject('acme/slow', 'cell_eu0'),
  ]);
});

afterAll(async () => {
  await stack?.close();
});

const framed = { 'gitlab-cells-response-framing': 'v1' };

function override(answer: Parameters<TestStack['world']['tunnelOverrides']['set']>[1]): void {
  stack.world.tunnelOverrides.set('acme/broken', answer);
}

async function uploadPack(project: string, input = '') {
  return collect(ssh(stack.alice.privateKey, stack.sshPort, ['git-upload-pack', `'${project}.git'`]), input);
}

describe('tunnel failures', () => {
  it('prints an error frame as ERROR when nothing else explains the failure', async () => {
    override(() => ({ headers: framed, body: errorFrames('Gitaly is unreachable') }));
    const res = await uploadPack('acme/broken');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('remote: ERROR: Gitaly is unreachable\n');
  });

  it('relays stderr frames and keeps the ERROR line out when git already explained it', async () => {
    override(() => ({ headers: framed, body: errorFrames('exit status 128', 'fatal: bad object\n') }));
    const res = await uploadPack('acme/broken');
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('fatal: bad object\n');
  });

  it("passes git's exit status through the exit status frame", async () => {
    override(() => ({
      headers: framed,
      body: Buffer.concat([
        encodeFrame(ResponseFrame.stdout, Buffer.from('0000')),
        encodeFrame(ResponseFrame.stderr, Buffer.from('warning: odd\n')),
        encodeExitStatus(3),
      ]),
    }));
    const res = await uploadPack('acme/broken');
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('0000');
    expect(res.stderr).toBe('warning: odd\n');
  });

  it('shows the body of a non-200 answer', async () => {
    override(() => ({ status: 503, body: Buffer.from('Gitaly is overloaded\n') }));
    const res = await uploadPack('acme/broken');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('remote: ERROR: Gitaly is overloaded\n');
  });

  it('says "Remote repository is unavailable" for an empty error answer', async () => {
    override(() => ({ status: 502 }));
    const res = await uploadPack('acme/broken');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('remote: ERROR: Remote repository is unavailable\n');
  });

  it('fails cleanly on a response that breaks the framing', async () => {
    override(() => ({ headers: framed, body: Buffer.from([0x09, 0, 0, 0, 0]) }));
    const res = await uploadPack('acme/broken');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('remote: ERROR: Remote repository is unavailable\n');
  });
});

describe('console messages', () => {
  it('prints gl_console_messages before the git output, as GitLab Shell does', async () => {
    stack.world.consoleMessages = ['Hello from the cell'];
    try {
      const res = await uploadPack('acme/app', '0000');
      expect(res.code).toBe(0);
      expect(res.stderr).toBe('remote: \nremote: Hello from the cell\nremote: \n');
      expect(res.stdout).toMatch(/^[0-9a-f]{4}[0-9a-f]{40} HEAD\0/);
    } finally {
      stack.world.consoleMessages = [];
    }
  });
});

describe('client disconnect', () => {
  it('cancels the tunnel stream when the SSH client is killed mid-fetch', async () => {
    const cell = stack.cell('cell_eu0');
    const before = cell.seen('/acme/slow.git/ssh-upload-pack').length;
    const client = ssh(stack.alice.privateKey, stack.sshPort, ['git-upload-pack', "'acme/slow.git'"]);
    let stdout = '';
    client.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('latin1');
    });
    const exited = new Promise((resolve) => client.on('close', resolve));
    // The advertisement arrived: git upload-pack now waits for the client's wants.
    await waitUntil(() => stdout.includes('refs/heads/main'), 10_000, 'the ref advertisement');
    const request = cell.seen('/acme/slow.git/ssh-upload-pack')[before];
    expect(request?.exitCode).toBeUndefined();
    client.kill('SIGKILL');
    await exited;
    await waitUntil(() => request?.cancelled, 10_000, 'the cell to see the stream cancelled');
    // The cell killed git upload-pack (no exit code: ended by a signal).
    await waitUntil(() => request?.exitCode !== undefined, 5000, 'git to be killed');
    expect(request?.exitCode).toBeNull();
  });
});

describe('session outcomes', () => {
  it('counts every session once by outcome: ok, policy, system, client-gone', async () => {
    const sessions = stack.router.metrics.sshSessions;
    const before = { ...sessions };
    const delta = () => ({
      ok: sessions.ok - before.ok,
      policy: sessions.policy - before.policy,
      'client-gone': sessions['client-gone'] - before['client-gone'],
      system: sessions.system - before.system,
    });
    expect((await uploadPack('acme/app', '0000')).code).toBe(0);
    expect((await collect(ssh(stack.alice.privateKey, stack.sshPort, ['rm -rf /']))).code).toBe(128);
    override(() => ({ status: 502 }));
    expect((await uploadPack('acme/broken')).code).toBe(1);
    const slow = ssh(stack.alice.privateKey, stack.sshPort, ['git-upload-pack', "'acme/slow.git'"]);
    let stdout = '';
    slow.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('latin1');
    });
    await waitUntil(() => stdout.includes('refs/heads/main'), 10_000, 'the ref advertisement');
    slow.kill('SIGKILL');
    const expected = { ok: 1, policy: 1, 'client-gone': 1, system: 1 };
    await waitUntil(
      () => JSON.stringify(delta()) === JSON.stringify(expected),
      10_000,
      'four counted sessions',
    );
    expect(delta()).toEqual(expected);
  });
});
