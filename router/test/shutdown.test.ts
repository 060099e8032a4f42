import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../test/helpers/poll.js';
import { collect, ssh } from '../test-support/clients.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * Connection lifetime: graceful shutdown (stop accepting, let sessions finish within the grace
 * period, then cancel) and the login grace time.
 */
let stack: TestStack | undefined;

afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function stalledFetch(s: TestStack) {
  const client = ssh(s.alice.privateKey, s.sshPort, ['git-upload-pack', "'acme/app.git'"]);
  let stdout = '';
  client.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('latin1');
  });
  const result = collectLater(client);
  await waitUntil(() => stdout.includes('refs/heads/main'), 10_000, 'the ref advertisement');
  return { client, result };
}

function collectLater(client: ReturnType<typeof ssh>) {
  return new Promise<number | null>((resolve) => client.on('close', (code) => resolve(code)));
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('shutdown', () => {
  it('lets a running session finish within the grace period', async () => {
    stack = await startTestStack({ shutdownGraceMs: 10_000 });
    await stack.addProject('acme/app', 'cell_eu0');
    const { client, result } = await stalledFetch(stack);
    const started = Date.now();
    const closed = stack.router.close();
    expect(await refused(stack.sshPort)).toBe(true);
    // The client finishes its fetch (nothing wanted): the session ends normally.
    client.stdin.end('0000');
    expect(await result).toBe(0);
    await closed;
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('cancels sessions still running when the grace period is over', async () => {
    stack = await startTestStack({ shutdownGraceMs: 300 });
    await stack.addProject('acme/app', 'cell_eu0');
    const { result } = await stalledFetch(stack);
    const request = stack.cell('cell_eu0').seen('/acme/app.git/ssh-upload-pack')[0];
    await stack.router.close();
    expect(await result).not.toBe(0);
    await waitUntil(() => request?.cancelled, 5000, 'the tunnel to be cancelled');
  });

  it('refuses new SSH logins on a stopped router', async () => {
    stack = await startTestStack({ shutdownGraceMs: 0 });
    await stack.router.close();
    const res = await collect(ssh(stack.alice.privateKey, stack.sshPort, [], ['-T']));
    expect(res.code).toBe(255);
  });

  it('drops a connection that does not authenticate within the login grace time', async () => {
    stack = await startTestStack({ loginGraceMs: 300 });
    const socket = connect(stack.sshPort, '127.0.0.1');
    let banner = '';
    socket.on('data', (d: Buffer) => {
      banner += d.toString('latin1');
    });
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(banner).toMatch(/^SSH-2\.0-GitLab-Cells-Router/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
