import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { readBodyLimited } from '../../lib/streams.js';
import { waitUntil } from '../../test/helpers/poll.js';
import { passthrough, pumpInput } from '../tunnel/input.js';
import { type CellTransport, createCellTransport } from './transport.js';

/**
 * The HTTP/1.1 leg against a real Node HTTP/1.1 server set up as the bridge's is
 * (`requestTimeout: 0`, full duplex): chunked streaming both ways, one connection per request,
 * backpressure in each direction, a response that ends before the body, cancellation.
 */
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  url: string;
  sockets: Socket[];
}

async function serve(handler: Handler): Promise<TestServer> {
  const server = http.createServer({ requestTimeout: 0, noDelay: true }, handler);
  const sockets: Socket[] = [];
  server.on('connection', (s: Socket) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

function transport(url: string): CellTransport {
  const t = createCellTransport(url, {}, 'http1');
  cleanups.push(() => t.close());
  return t;
}

const MIB = 1 << 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An endless body source that counts what was taken from it. */
function endlessSource(): { source: Readable; produced: () => number } {
  let produced = 0;
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const source = new Readable({
    read() {
      produced += chunk.length;
      this.push(chunk);
    },
  });
  cleanups.push(async () => {
    source.destroy();
  });
  return { source, produced: () => produced };
}

describe('HTTP/1.1 transport', () => {
  it('streams a chunked body while the response streams, Connection: close, one connection per request', async () => {
    const seen: IncomingMessage[] = [];
    const srv = await serve((req, res) => {
      seen.push(req);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      // Full duplex: every body chunk is answered before the next one is sent.
      req.on('data', (c: Buffer) => res.write(`echo:${c.toString()};`));
      req.on('end', () => res.end(`${req.method} ${req.url}`));
    });
    const t = transport(`${srv.url}/prefix/`);
    const call = await t.open({
      method: 'POST',
      path: '/a.git/x',
      headers: { host: 'evil', 'x-a': '1' },
      streamBody: true,
    });
    const res = await call.response;
    expect(res.status).toBe(200);
    const got: string[] = [];
    res.body.on('data', (c: Buffer) => got.push(c.toString()));
    call.body.write('one');
    await waitUntil(() => got.join('').includes('echo:one;'), 5000, 'the first echo');
    call.body.write('two');
    await waitUntil(() => got.join('').includes('echo:two;'), 5000, 'the second echo');
    call.body.end();
    await new Promise((r) => res.body.once('end', r));
    expect(got.join('')).toBe('echo:one;echo:two;POST /prefix/a.git/x');
    const head = seen[0]?.headers ?? {};
    expect(head['transfer-encoding']).toBe('chunked');
    expect(head.connection).toBe('close');
    expect(head.host).toBe(new URL(srv.url).host);
    expect(head['x-a']).toBe('1');

    const second = await t.open({ method: 'GET', path: '/b', headers: {}, streamBody: false });
    expect((await readBodyLimited((await second.response).body, 1000)).body.toString()).toBe('GET /prefix/b');
    expect(srv.sockets).toHaveLength(2);
  });

  it('a slow reader holds the bridge back: the router buffers a bounded amount, then gets everything', async () => {
    const total = 64 * MIB;
    let written = 0;
    let serverSocket: Socket | undefined;
    const srv = await serve((req, res) => {
      serverSocket = req.socket;
      res.writeHead(200);
      const chunk = Buffer.alloc(MIB, 0x62);
      const pump = () => {
        while (written < total) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const call = await transport(srv.url).open({ method: 'POST', path: '/', headers: {}, streamBody: true });
    const res = await call.response;
    res.body.pause();
    await sleep(1000);
    // What left the bridge sits in the kernel's socket buffers and in at most one read of ours.
    expect(serverSocket?.bytesWritten ?? 0).toBeLessThan(24 * MIB);
    expect(res.body.readableLength).toBeLessThanOrEqual(MIB);
    expect(written).toBeLessThan(total);
    let received = 0;
    res.body.on('data', (c: Buffer) => {
      received += c.length;
    });
    res.body.resume();
    await new Promise((r) => res.body.once('end', r));
    expect(received).toBe(total);
    call.body.end();
  });

  it('a bridge that does not read the body pauses the SSH side: a bounded amount is taken from stdin', async () => {
    let request: IncomingMessage | undefined;
    let bodyBytes = 0;
    const srv = await serve((req, res) => {
      request = req;
      req.pause();
      res.writeHead(200);
      res.flushHeaders();
      req.on('data', (c: Buffer) => {
        bodyBytes += c.length;
      });
      req.on('end', () => res.end('ok'));
    });
    const call = await transport(srv.url).open({ method: 'POST', path: '/', headers: {}, streamBody: true });
    const res = await call.response;
    const { source, produced } = endlessSource();
    const pump = pumpInput(source, call.body, passthrough);
    await sleep(1000);
    const taken = produced();
    // Kernel buffers both ends plus the pump's 256 KiB; an unbounded pump would have taken far more.
    expect(taken).toBeLessThan(24 * MIB);
    await sleep(300);
    expect(produced() - taken).toBeLessThan(MIB);
    request?.resume();
    await waitUntil(() => bodyBytes > taken, 5000, 'the bridge to read on');
    pump.stop();
    call.body.end();
    expect((await readBodyLimited(res.body, 100)).body.toString()).toBe('ok');
  });

  it('a response that ends before the request body is read in full; the late body writes fail quietly', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.end('refused early');
    });
    const call = await transport(srv.url).open({ method: 'POST', path: '/', headers: {}, streamBody: true });
    call.body.write(Buffer.alloc(256 * 1024));
    const res = await call.response;
    expect((await readBodyLimited(res.body, 1000)).body.toString()).toBe('refused early');
    for (let i = 0; i < 8; i++) call.body.write(Buffer.alloc(256 * 1024));
    call.body.end();
    await new Promise((r) => call.body.once('close', r));
  });

  it('cancel() closes the connection: the bridge sees its client gone mid-response', async () => {
    let closedEarly = false;
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('partial');
      res.on('close', () => {
        closedEarly = !res.writableFinished;
      });
    });
    const call = await transport(srv.url).open({ method: 'POST', path: '/', headers: {}, streamBody: true });
    const res = await call.response;
    await new Promise((r) => res.body.once('data', r));
    call.cancel();
    await waitUntil(() => closedEarly, 5000, 'the server to see the connection closed');
    expect(srv.sockets[0]?.destroyed).toBe(true);
  });

  it('rejects the response when the cell is unreachable or drops the connection before answering', async () => {
    const srv = await serve((req) => req.socket.destroy());
    const dropped = await transport(srv.url).open({
      method: 'GET',
      path: '/',
      headers: {},
      streamBody: false,
    });
    await expect(dropped.response).rejects.toThrow();

    const gone = await serve(() => undefined);
    const port = new URL(gone.url).port;
    await cleanups.pop()?.();
    const call = await transport(`http://127.0.0.1:${port}`).open({
      method: 'GET',
      path: '/',
      headers: {},
      streamBody: false,
    });
    await expect(call.response).rejects.toThrow();
  });
});
