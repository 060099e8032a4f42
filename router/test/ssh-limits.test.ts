import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../test/helpers/poll.js';
import { collect, gitViaSsh, remoteUrl, sshOptions } from '../test-support/clients.js';
import { gitEnv } from '../test-support/git-repos.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * gitlab-sshd's limits through real OpenSSH: concurrent sessions per connection (one
 * `ControlMaster` connection), and the cap on connections that have not authenticated yet.
 */
let stack: TestStack | undefined;
const cleanups: (() => void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  await stack?.close();
  stack = undefined;
});

function output(child: ChildProcessWithoutNullStreams) {
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => {
    out.stdout += d.toString('latin1');
  });
  child.stderr.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  return out;
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('close', (code) => resolve(code));
  });
}

describe('concurrent sessions per connection', () => {
  it('refuses the 11th session on one ControlMaster connection; ten clones over it succeed', async () => {
    stack = await startTestStack();
    const s = stack;
    await s.addProject('acme/app', 'cell_eu0', { 'README.md': 'app\n' });
    const control = join(mkdtempSync(join(s.dir, 'mux-')), 'ctl');
    const base = sshOptions(s.alice.privateKey, s.sshPort);
    const master = spawn(
      'ssh',
      [...base, '-M', '-S', control, '-N', '-o', 'ControlPersist=no', 'git@127.0.0.1'],
      {
        env: gitEnv(),
      },
    );
    cleanups.push(() => master.kill());
    await waitUntil(() => existsSync(control), 15_000, 'the ControlMaster socket');
    const viaMaster = [...base, '-S', control, '-o', 'ControlMaster=no'];

    // Ten sessions held open: upload-pack advertised its refs and waits for the client.
    const held = Array.from({ length: 10 }, () => {
      const child = spawn('ssh', [...viaMaster, 'git@127.0.0.1', "git-upload-pack 'acme/app.git'"], {
        env: gitEnv(),
      });
      return { child, out: output(child) };
    });
    await waitUntil(
      () => held.every((h) => h.out.stdout.includes('refs/heads/main')),
      30_000,
      'ten advertisements',
    );

    // OpenSSH falls back to a connection of its own when the master's session is refused: port 1
    // (closed) keeps the 11th on the shared connection only.
    const noFallback = [...sshOptions(s.alice.privateKey, 1), '-S', control, '-o', 'ControlMaster=no'];
    const eleventh = await collect(
      spawn('ssh', [...noFallback, 'git@127.0.0.1', "git-upload-pack 'acme/app.git'"], { env: gitEnv() }),
    );
    expect(eleventh.stderr).toContain('Session open refused by peer');
    expect(eleventh.code).toBe(255);
    expect(eleventh.stdout).toBe('');
    expect(s.router.metrics.sshConcurrentLimitedSessions).toBe(1);

    for (const h of held) h.child.stdin.end('0000');
    expect(await Promise.all(held.map((h) => exited(h.child)))).toEqual(Array(10).fill(0));

    // The slots are free again: ten real clones at once over the same connection.
    const work = mkdtempSync(join(s.dir, 'clones-'));
    const sshCommand = ['ssh', ...viaMaster].join(' ');
    const clones = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        collect(
          spawn('git', ['clone', '-q', remoteUrl(s.sshPort, 'acme/app'), join(work, `c${i}`)], {
            env: gitEnv({ GIT_SSH_COMMAND: sshCommand }),
          }),
        ),
      ),
    );
    expect(clones.map((c) => c.code)).toEqual(Array(10).fill(0));
    for (let i = 0; i < 10; i++) expect(readFileSync(join(work, `c${i}`, 'README.md'), 'utf8')).toBe('app\n');
    expect(s.router.metrics.sshConnections).toBe(1);
    expect(s.router.metrics.sshConcurrentLimitedSessions).toBe(1);
  });

  it("answers the refused channel as gitlab-sshd: resource shortage, 'too many concurrent sessions'", async () => {
    // OpenSSH's mux client only says "Session open refused by peer"; ssh2's client shows the reason.
    stack = await startTestStack({ maxSessions: 2 });
    await stack.addProject('acme/app', 'cell_eu0');
    const client = new ssh2.Client();
    cleanups.push(() => client.end());
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({
        host: '127.0.0.1',
        port: stack?.sshPort,
        username: 'git',
        privateKey: readFileSync(stack?.alice.privateKey ?? ''),
      });
    });
    const open = () =>
      new Promise<ssh2.ClientChannel>((resolve, reject) =>
        // upload-pack waits for the client after its advertisement: the session stays open.
        client.exec("git-upload-pack 'acme/app.git'", (err, channel) =>
          err ? reject(err) : resolve(channel),
        ),
      );
    await open();
    await open();
    await expect(open()).rejects.toMatchObject({
      reason: 4,
      message: expect.stringContaining('too many concurrent sessions'),
    });
    expect(stack.router.metrics.sshConcurrentLimitedSessions).toBe(1);
  });
});

/** Opens raw TCP connections that never authenticate; resolves once each was admitted or dropped. */
async function flood(port: number, from: string, n: number): Promise<{ held: Socket[]; dropped: number }> {
  const results = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<{ socket: Socket; admitted: boolean }>((resolve) => {
          const socket = connect({ port, host: '127.0.0.1', localAddress: from });
          socket.on('error', () => undefined);
          socket.once('data', () => resolve({ socket, admitted: true }));
          socket.once('close', () => resolve({ socket, admitted: false }));
        }),
    ),
  );
  const held = results.filter((r) => r.admitted).map((r) => r.socket);
  cleanups.push(() => {
    for (const s of held) s.destroy();
  });
  return { held, dropped: n - held.length };
}

describe('unauthenticated connections cap (MaxStartups)', () => {
  it('drops a flood beyond the caps while a real clone still succeeds', async () => {
    stack = await startTestStack({ maxStartups: '6:100:6', perSourceMaxStartups: 3, loginGraceMs: 60_000 });
    const s = stack;
    await s.addProject('acme/app', 'cell_eu0');
    const work = mkdtempSync(join(s.dir, 'work-'));

    // One source floods: three wait for authentication, the other seventeen are dropped.
    const first = await flood(s.sshPort, '127.0.0.2', 20);
    expect(first.held).toHaveLength(3);
    expect(first.dropped).toBe(17);
    const clone = await collect(
      gitViaSsh(s.alice.privateKey, s.sshPort, [
        'clone',
        '-q',
        remoteUrl(s.sshPort, 'acme/app'),
        join(work, 'a'),
      ]),
    );
    expect(clone.stderr).toBe('');
    expect(clone.code).toBe(0);

    // A second source fills the global cap: anyone else is dropped until they leave.
    const second = await flood(s.sshPort, '127.0.0.3', 3);
    expect(second.held).toHaveLength(3);
    const third = await flood(s.sshPort, '127.0.0.4', 1);
    expect(third.dropped).toBe(1);
    expect(s.router.metrics.sshStartupsDropped).toBe(18);

    for (const sock of [...first.held, ...second.held]) sock.destroy();
    await waitUntil(
      async () => (await flood(s.sshPort, '127.0.0.4', 1)).held.length === 1,
      5000,
      'free slots',
    );
    const again = await collect(
      gitViaSsh(s.alice.privateKey, s.sshPort, [
        'clone',
        '-q',
        remoteUrl(s.sshPort, 'acme/app'),
        join(work, 'b'),
      ]),
    );
    expect(again.code).toBe(0);
  });
});

describe('keepalives', () => {
  it('drops a connection whose client stopped answering keepalive@openssh.com', async () => {
    stack = await startTestStack({ keepaliveIntervalMs: 200, keepaliveCountMax: 2 });
    const s = stack;
    const client = new ssh2.Client();
    cleanups.push(() => client.end());
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({
        host: '127.0.0.1',
        port: s.sshPort,
        username: 'git',
        privateKey: readFileSync(s.alice.privateKey),
      });
    });
    client.on('error', () => undefined);
    expect(s.router.metrics.sshInFlight.connections).toBe(1);
    // A frozen client: nothing it receives is read, so no keepalive is ever answered.
    (client as unknown as { _sock: Socket })._sock.pause();
    const frozen = Date.now();
    await waitUntil(() => s.router.metrics.sshInFlight.connections === 0, 10_000, 'the connection dropped');
    expect(Date.now() - frozen).toBeGreaterThanOrEqual(300);
  });
});
