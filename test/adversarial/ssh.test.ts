import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rssMiB } from '../helpers/procs.js';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * Hostile SSH clients against the router (bounded loops, loopback only): floods and stalls before
 * authentication, shell metacharacters and oversized input in exec, and every channel or request
 * type gitlab-sshd refuses. Each is refused cleanly, nothing runs, and a clone still works meanwhile.
 */
const LOGIN_GRACE_MS = 2_000;
let stack: RunningStack;
let work: string;

beforeAll(async () => {
  stack = await startStack({ env: { ROUTER_LOGIN_GRACE_MS: String(LOGIN_GRACE_MS) } });
  work = mkdtempSync(join(tmpdir(), 'adversarial-ssh-'));
});
afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

function sshPort(): number {
  return stack.sshPort;
}

/** A TCP client that says `greeting` (and nothing more); resolves with how long the server kept it. */
function stallingClient(greeting: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(sshPort(), '127.0.0.1', () => socket.write(greeting));
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Date.now() - started));
  });
}

const clone = (name: string) =>
  run('git', ['clone', '-q', stack.url('my-company/my-project'), join(work, name)], {
    env: stack.gitEnv('alice'),
    timeoutMs: 60_000,
  });

/** Real OpenSSH as alice against the router, with extra options and (optionally) a remote command. */
function ssh(options: string[], command?: string) {
  const base = stack.sshCommand('alice').split(' ').slice(1);
  const args = [...base, '-p', String(sshPort()), ...options, 'git@127.0.0.1'];
  return run('ssh', command === undefined ? args : [...args, command], {
    env: stack.gitEnv('alice'),
    timeoutMs: 30_000,
  });
}

describe('pre-authentication', () => {
  it('a flood of 200 connections that never authenticate is dropped after the login grace; a clone meanwhile succeeds', async () => {
    const routerPid = stack.json.pids.router as number;
    const before = rssMiB(routerPid) ?? 0;
    const flood = Array.from({ length: 200 }, () => stallingClient(Buffer.from('SSH-2.0-flood\r\n')));
    const meanwhile = await clone('during-flood');
    expect(meanwhile.code, meanwhile.stderr).toBe(0);
    const held = await Promise.all(flood);
    expect(Math.max(...held)).toBeLessThan(LOGIN_GRACE_MS + 5_000);
    expect((rssMiB(routerPid) ?? 0) - before).toBeLessThan(100);
  }, 60_000);

  it('a client that stalls in the key exchange (banner, then half a packet) is dropped after the login grace', async () => {
    const held = await stallingClient(
      Buffer.concat([Buffer.from('SSH-2.0-stall\r\n'), Buffer.from([0, 0, 1])]),
    );
    expect(held).toBeGreaterThanOrEqual(LOGIN_GRACE_MS - 100);
    expect(held).toBeLessThan(LOGIN_GRACE_MS + 5_000);
  }, 30_000);
});

describe('exec requests', () => {
  it('refuses commands with shell metacharacters and runs none of them', async () => {
    const marker = join(work, 'pwned');
    const attempts = [
      `git-upload-pack 'my-company/my-project.git'; touch ${marker}`,
      `git-upload-pack my-company/my-project.git && touch ${marker}`,
      `git-upload-pack $(touch ${marker})`,
      `git-upload-pack \`touch ${marker}\``,
      `git-upload-pack my-company/my-project.git | touch ${marker}`,
      `touch ${marker}`,
      `git-upload-pack 'x'\ntouch ${marker}`,
    ];
    for (const command of attempts) {
      const r = await ssh([], command);
      expect(r.code, command).not.toBe(0);
      expect(r.stderr, command).toMatch(/ERROR|not found|Disallowed command/i);
    }
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it('refuses an oversized command and survives an oversized GIT_PROTOCOL value', async () => {
    const long = await ssh([], `git-upload-pack ${'a/'.repeat(40_000)}x.git`);
    expect(long.code).not.toBe(0);
    // ssh2 refuses a packet that large: the connection ends, nothing ran.
    expect(long.stderr).toMatch(/ERROR|closed by remote host/);
    const env = await ssh(
      ['-o', `SetEnv=GIT_PROTOCOL=version=2${':x'.repeat(30_000)}`],
      'git-upload-pack my-company/my-project.git',
    );
    // git's advertisement or a refusal, but an answer and an exit, never a hang or a crash.
    expect(env.code).not.toBeNull();
    expect((await clone('after-oversized')).code).toBe(0);
  }, 60_000);
});

describe('channels and requests gitlab-sshd does not serve', () => {
  it('refuses direct-tcpip (ssh -W) and the sftp subsystem', async () => {
    const tcp = await ssh(['-W', '127.0.0.1:22']);
    expect(tcp.code).not.toBe(0);
    expect(tcp.stderr).toMatch(/open failed|administratively prohibited|forwarding failed/i);
    const sftp = await ssh(['-s', 'sftp']);
    expect(sftp.code).not.toBe(0);
  }, 60_000);

  it('refuses a pty and answers a shell with the welcome message only', async () => {
    const pty = await ssh(['-tt'], 'git-upload-pack my-company/my-project.git');
    expect(pty.stderr + pty.stdout).toMatch(/PTY allocation request failed/);
    const shell = await ssh(['-T']);
    expect(shell.stdout).toBe('Welcome to GitLab, @alice!\n');
    expect(shell.code).toBe(0);
  }, 30_000);

  it('opens no X11 or agent channel back to a client that asks for them (x11-req, auth-agent-req)', async () => {
    const key = readFileSync(stack.json.users.find((u) => u.username === 'alice')?.privateKey as string);
    const client = new Client();
    const ready = new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
    });
    let channelsBack = 0;
    client.on('x11', () => channelsBack++);
    client.connect({ host: '127.0.0.1', port: sshPort(), username: 'git', privateKey: key });
    await ready;
    try {
      for (const opts of [{ x11: true }, { agentForward: true }]) {
        const outcome = await new Promise<string>((resolve) => {
          client.exec('git-upload-pack my-company/my-project.git', opts, (err, stream) => {
            if (err) return resolve(`refused: ${err.message}`);
            stream.on('data', () => undefined);
            stream.stderr.on('data', () => undefined);
            stream.on('close', () => resolve('ran'));
            stream.end('0000');
          });
        });
        // Refused (x11-req), or ignored (auth-agent-req, sent without want-reply); the git command may run.
        expect(outcome, JSON.stringify(opts)).toMatch(/^(refused|ran)/);
      }
      expect(channelsBack).toBe(0);
    } finally {
      client.end();
    }
  }, 30_000);
});
