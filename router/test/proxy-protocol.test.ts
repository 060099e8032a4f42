import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { V2_SIGNATURE } from '../../lib/proxy-protocol.js';
import { collect, gitViaSsh, remoteUrl, ssh } from '../test-support/clients.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * PROXY protocol on the SSH listener: real git and OpenSSH connect to a tiny load balancer that
 * puts a v1 or v2 header naming 203.0.113.7 before the client's bytes; the router must send that
 * address to `/allowed` as `check_ip`.
 */
let stack: TestStack | undefined;
let balancer: Server | undefined;

afterEach(async () => {
  balancer?.close();
  balancer = undefined;
  await stack?.close();
  stack = undefined;
});

const CLIENT = { address: '203.0.113.7', port: 51000 };

function v1Header(): Buffer {
  return Buffer.from(`PROXY TCP4 ${CLIENT.address} 127.0.0.1 ${CLIENT.port} 22\r\n`);
}

function v2Header(): Buffer {
  const b = Buffer.alloc(16);
  b[0] = 0x21; // version 2, PROXY
  b[1] = 0x11; // TCP over IPv4
  b.writeUInt16BE(12, 2);
  Buffer.from(CLIENT.address.split('.').map(Number)).copy(b, 4);
  Buffer.from([127, 0, 0, 1]).copy(b, 8);
  b.writeUInt16BE(CLIENT.port, 12);
  b.writeUInt16BE(22, 14);
  return Buffer.concat([V2_SIGNATURE, b.subarray(0, 16)]);
}

/** A TCP relay to the router that writes `header` first, as HAProxy's `send-proxy` does. */
async function startBalancer(target: number, header: () => Buffer): Promise<number> {
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1', () => {
      upstream.write(header());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  balancer = server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

function checkIps(s: TestStack): unknown[] {
  return [...s.cells.values()].flatMap((c) =>
    c
      .seen('/api/v4/internal/allowed')
      .map((r) => (JSON.parse(r.body.toString()) as { check_ip: unknown }).check_ip),
  );
}

describe('PROXY protocol', () => {
  it.each([
    ['v1', v1Header],
    ['v2', v2Header],
  ])('clones through a %s header; /allowed gets the client address as check_ip', async (_v, header) => {
    stack = await startTestStack({
      proxyProtocol: true,
      proxyPolicy: 'require',
      proxyAllowed: ['127.0.0.1/32'],
    });
    await stack.addProject('acme/app', 'cell_eu0', { 'README.md': 'app\n' });
    const port = await startBalancer(stack.sshPort, header);
    const dest = join(mkdtempSync(join(stack.dir, 'work-')), 'app');
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, port, ['clone', '-q', remoteUrl(port, 'acme/app'), dest]),
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(readFileSync(join(dest, 'README.md'), 'utf8')).toBe('app\n');
    expect(checkIps(stack)).toEqual([CLIENT.address]);
    expect(stack.router.metrics.sshProxyHeaders).toBe(1);
  });

  it('require: a connection without a header is refused', async () => {
    stack = await startTestStack({ proxyProtocol: true, proxyPolicy: 'require', proxyHeaderTimeoutMs: 200 });
    const res = await collect(ssh(stack.alice.privateKey, stack.sshPort, []));
    expect(res.code).toBe(255);
    expect(stack.router.metrics.sshProxyRefused).toBe(1);
    expect(stack.router.metrics.sshConnections).toBe(0);
  });

  it('require: a header from a peer outside the allow-list is refused', async () => {
    stack = await startTestStack({
      proxyProtocol: true,
      proxyPolicy: 'require',
      proxyAllowed: ['10.0.0.0/8'],
    });
    const port = await startBalancer(stack.sshPort, v1Header);
    const res = await collect(ssh(stack.alice.privateKey, port, []));
    expect(res.code).toBe(255);
    expect(res.stdout).toBe('');
    expect(stack.router.metrics.sshProxyRefused).toBe(1);
    expect(checkIps(stack)).toEqual([]);
  });

  it('a peer that reset the connection before the router accepted it is not a refusal', async () => {
    stack = await startTestStack({
      proxyProtocol: true,
      proxyPolicy: 'require',
      proxyAllowed: ['127.0.0.1/32'],
    });
    // A balancer's health check that gives up on a busy router: it connects, sends its header and
    // resets while the router's event loop is busy, so the router accepts a connection already gone.
    // execFileSync blocks this process, and the router in it, until the checker has gone.
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `const s = require('node:net').connect(${stack.sshPort}, '127.0.0.1', () => {
           s.write(Buffer.from(process.argv[1], 'hex'), () => { s.resetAndDestroy(); console.log('reset'); });
         });`,
        v2Header().toString('hex'),
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(out.trim()).toBe('reset');
    await new Promise((r) => setTimeout(r, 200));
    expect(stack.router.metrics.sshProxyRefused).toBe(0);
    expect(stack.router.metrics.sshInFlight.connections).toBe(0);
  });

  it('use: a client without a header is served as its TCP address; ignore: the header is dropped', async () => {
    stack = await startTestStack({ proxyProtocol: true, proxyPolicy: 'use' });
    await stack.addProject('acme/app', 'cell_eu0');
    const direct = await collect(
      ssh(stack.alice.privateKey, stack.sshPort, ["git-upload-archive 'acme/app.git'"]),
    );
    expect(direct.stderr).not.toMatch(/ERROR/);
    expect(checkIps(stack)).toEqual(['127.0.0.1']);
    await stack.close();

    stack = await startTestStack({ proxyProtocol: true, proxyPolicy: 'ignore' });
    await stack.addProject('acme/app', 'cell_eu0');
    const port = await startBalancer(stack.sshPort, v2Header);
    const ignored = await collect(ssh(stack.alice.privateKey, port, ["git-upload-archive 'acme/app.git'"]));
    expect(ignored.stderr).not.toMatch(/ERROR/);
    expect(checkIps(stack)).toEqual(['127.0.0.1']);
  });
});
