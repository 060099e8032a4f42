import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseProxyHeader, readProxyHeader, V2_SIGNATURE } from './proxy-protocol.js';

function v2(command: number, family: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head[0] = 0x20 | command;
  head[1] = family;
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([V2_SIGNATURE, head, body]);
}

function ipv4Body(src: number[], dst: number[], sport: number, dport: number): Buffer {
  const b = Buffer.alloc(12);
  Buffer.from(src).copy(b, 0);
  Buffer.from(dst).copy(b, 4);
  b.writeUInt16BE(sport, 8);
  b.writeUInt16BE(dport, 10);
  return b;
}

describe('parseProxyHeader', () => {
  it('reads v1 TCP4, TCP6 and UNKNOWN', () => {
    const tcp4 = Buffer.from('PROXY TCP4 203.0.113.7 192.0.2.1 51000 22\r\nSSH-2.0-x');
    expect(parseProxyHeader(tcp4)).toEqual({
      kind: 'header',
      length: 43,
      header: {
        version: 1,
        command: 'proxy',
        source: { address: '203.0.113.7', port: 51000 },
        destination: { address: '192.0.2.1', port: 22 },
      },
    });
    const tcp6 = parseProxyHeader(Buffer.from('PROXY TCP6 2001:db8::7 2001:db8::1 4000 22\r\n'));
    expect(tcp6).toMatchObject({ header: { source: { address: '2001:db8::7', port: 4000 } } });
    expect(parseProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toMatchObject({
      header: { command: 'local' },
    });
  });

  it('reads v2 PROXY over IPv4 and IPv6, and LOCAL', () => {
    const ipv4 = v2(1, 0x11, ipv4Body([198, 51, 100, 9], [10, 0, 0, 1], 40000, 2222));
    expect(parseProxyHeader(Buffer.concat([ipv4, Buffer.from('SSH-')]))).toEqual({
      kind: 'header',
      length: 28,
      header: {
        version: 2,
        command: 'proxy',
        source: { address: '198.51.100.9', port: 40000 },
        destination: { address: '10.0.0.1', port: 2222 },
      },
    });
    const body6 = Buffer.alloc(36);
    Buffer.from([0x20, 0x01, 0x0d, 0xb8]).copy(body6, 0);
    body6[15] = 7;
    body6.writeUInt16BE(1234, 32);
    expect(parseProxyHeader(v2(1, 0x21, body6))).toMatchObject({
      header: { source: { address: '2001:db8::7', port: 1234 } },
    });
    expect(parseProxyHeader(v2(0, 0, Buffer.alloc(0)))).toMatchObject({ header: { command: 'local' } });
  });

  it('says incomplete, none or invalid', () => {
    expect(parseProxyHeader(Buffer.from('PRO'))).toEqual({ kind: 'incomplete' });
    expect(parseProxyHeader(V2_SIGNATURE.subarray(0, 5))).toEqual({ kind: 'incomplete' });
    expect(parseProxyHeader(Buffer.from('SSH-2.0-OpenSSH_9.6\r\n'))).toEqual({ kind: 'none' });
    expect(parseProxyHeader(Buffer.from('PROXY TCP4 1.2.3 4.5.6.7 1 2\r\n'))).toMatchObject({
      kind: 'invalid',
    });
    expect(parseProxyHeader(Buffer.from('PROXY TCP4 1.2.3.4 4.5.6.7 99999 2\r\n'))).toMatchObject({
      kind: 'invalid',
    });
    expect(parseProxyHeader(Buffer.from(`PROXY ${'x'.repeat(120)}`))).toMatchObject({ kind: 'invalid' });
    const badVersion = v2(1, 0x11, ipv4Body([1, 2, 3, 4], [5, 6, 7, 8], 1, 2));
    badVersion[12] = 0x31;
    expect(parseProxyHeader(badVersion)).toMatchObject({ kind: 'invalid' });
  });
});

async function pair(): Promise<{ server: Socket; client: Socket; close: () => void }> {
  const listener = createServer();
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  const port = (listener.address() as { port: number }).port;
  const accepted = new Promise<Socket>((r) => listener.once('connection', r));
  const client = connect(port, '127.0.0.1');
  const server = await accepted;
  return {
    server,
    client,
    close: () => {
      client.destroy();
      server.destroy();
      listener.close();
    },
  };
}

describe('readProxyHeader', () => {
  it('reads a header split over writes and leaves the rest on the socket', async () => {
    const p = await pair();
    const reading = readProxyHeader(p.server, 2000);
    p.client.write('PROXY TCP4 203.0.113.7 ');
    setTimeout(() => p.client.write('192.0.2.1 51000 22\r\nSSH-2.0-client\r\n'), 20);
    const header = await reading;
    expect(header?.source).toEqual({ address: '203.0.113.7', port: 51000 });
    const rest = await new Promise<Buffer>((r) => {
      p.server.once('data', r);
      p.server.resume();
    });
    expect(rest.toString()).toBe('SSH-2.0-client\r\n');
    p.close();
  });

  it('resolves undefined for a client that speaks SSH first or not at all, rejects a stalled header', async () => {
    const p = await pair();
    p.client.write('SSH-2.0-client\r\n');
    await expect(readProxyHeader(p.server, 2000)).resolves.toBeUndefined();
    p.close();
    const silent = await pair();
    await expect(readProxyHeader(silent.server, 50)).resolves.toBeUndefined();
    silent.close();
    const stalled = await pair();
    stalled.client.write('PROXY TCP4');
    await expect(readProxyHeader(stalled.server, 100)).rejects.toThrow(/incomplete after 100 ms/);
    stalled.close();
  });

  it('takes a header that arrived in time though a busy event loop ran the deadline first', async () => {
    const p = await pair();
    const header = await new Promise<unknown>((resolve, reject) => {
      setImmediate(() => {
        // The header is in the kernel's buffer now; the loop is then blocked past the deadline, so
        // the next loop turn starts with the due timer before it polls the socket (a loaded router).
        p.client.write('PROXY TCP4 203.0.113.7 192.0.2.1 51000 22\r\n');
        readProxyHeader(p.server, 20).then(resolve, reject);
        const until = Date.now() + 80;
        while (Date.now() < until) {
          // busy
        }
      });
    });
    expect(header).toMatchObject({ source: { address: '203.0.113.7', port: 51000 } });
    p.close();
  });
});
