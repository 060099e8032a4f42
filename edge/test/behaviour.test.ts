/**
 * Each edge's behaviours with real clients over loopback: a bare edge (Debian's nginx or HAProxy,
 * `startBareEdge`) in front of a tiny upstream that notes when things arrive. Timeouts fire at the
 * configured time ± 10 %; body buffering really holds the request until its body ended; response
 * buffering off streams (nginx's `proxy_buffering on` still passes early bytes on: not asserted).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startBareEdge } from '../bare-edge.js';
import { type EdgeFigures, edgeFigures } from '../figures.js';

const root = mkdtempSync(join(tmpdir(), 'edge-behaviour-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const srv = netServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** An upstream answering with `handler`; `arrived` the time each request's headers reached it. */
async function upstream(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const arrived: number[] = [];
  const server: Server = createServer((req, res) => {
    arrived.push(Date.now());
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { port: (server.address() as AddressInfo).port, arrived };
}

/** A bare edge of `figures` in front of the upstream; its front port. */
async function edge(figures: EdgeFigures, upstreamPort: number): Promise<number> {
  const port = await freePort();
  const dir = mkdtempSync(join(root, `${figures.proxy}-`));
  const e = await startBareEdge(dir, figures, [
    { cell: 'test', listen: `127.0.0.1:${port}`, upstream: `127.0.0.1:${upstreamPort}` },
  ]);
  cleanups.push(() => e.stop());
  return port;
}

/** A raw client: writes the request head of a chunked POST, then what the test sends; notes what comes back. */
function client(port: number, path = '/g/p.git/ssh-upload-pack') {
  const socket = connect(port, '127.0.0.1');
  const got: Array<{ at: number; text: string }> = [];
  socket.on('data', (c: Buffer) => got.push({ at: Date.now(), text: c.toString() }));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now())));
  socket.write(`POST ${path} HTTP/1.1\r\nHost: cell\r\nTransfer-Encoding: chunked\r\n\r\n`);
  return {
    chunk: (s: string) => socket.write(`${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`),
    end: () => socket.write('0\r\n\r\n'),
    got,
    closed,
    destroy: () => socket.destroy(),
  };
}

const within10 = (ms: number, want: number) => {
  expect(ms).toBeGreaterThanOrEqual(want * 0.9);
  expect(ms).toBeLessThanOrEqual(want * 1.1 + 300);
};

describe('nginx (and cloudflare) edge', () => {
  it('kills a request body idle past client_body_timeout while the response streams', {
    timeout: 30_000,
  }, async () => {
    // Cloudflare's figures at 1/30: idle body 2 s; the idle connection 0.5 s is kept away by a trickle.
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200);
      const t = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(t));
    });
    const port = await edge(edgeFigures('cloudflare', { timeScale: 1 / 30 }), up.port);
    const c = client(port);
    c.chunk('0032want');
    const lastByte = Date.now();
    const closedAt = await c.closed;
    within10(closedAt - lastByte, 2000);
    expect(c.got.map((g) => g.text).join('')).toContain('200 OK');
  });

  it('closes a connection idle past proxy_read_timeout (the pre-push hook case)', {
    timeout: 30_000,
  }, async () => {
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200);
      res.write('advertisement');
    });
    const port = await edge(edgeFigures('cloudflare', { timeScale: 0.1 }), up.port);
    const c = client(port, '/g/p.git/ssh-receive-pack');
    c.chunk('0000');
    const start = Date.now();
    const closedAt = await c.closed;
    // The client's body is open but idle too: the idle connection (1.5 s) comes first, not the body's 6 s.
    within10(closedAt - start, 1500);
  });

  it('with body buffering on, the upstream sees the request only after its body ended; off, before', {
    timeout: 30_000,
  }, async () => {
    for (const buffer of [true, false]) {
      const up = await upstream((req, res) => {
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      const port = await edge(edgeFigures('nginx', { bufferSshPackBody: buffer }), up.port);
      const c = client(port);
      c.chunk('first');
      await sleep(1000);
      const endAt = Date.now();
      c.chunk('second');
      c.end();
      await sleep(500);
      expect(up.arrived.length, `buffer ${buffer}`).toBe(1);
      const arrived = up.arrived[0] as number;
      if (buffer) expect(arrived).toBeGreaterThanOrEqual(endAt);
      else expect(arrived).toBeLessThan(endAt);
      c.destroy();
    }
  });

  it('streams the response with proxy_buffering off', { timeout: 30_000 }, async () => {
    let secondAt = 0;
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('first-part');
      setTimeout(() => {
        secondAt = Date.now();
        res.end('second-part');
      }, 1000);
    });
    const port = await edge(edgeFigures('nginx', { bufferResponse: false }), up.port);
    const c = client(port, '/other');
    c.end();
    await sleep(1500);
    const first = c.got.find((g) => g.text.includes('first-part'));
    expect(first?.at).toBeLessThan(secondAt);
    c.destroy();
  });
});

describe('HAProxy edge', () => {
  it('closes a connection whose server side is idle past timeout server', { timeout: 30_000 }, async () => {
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200);
      res.write('advertisement');
    });
    const port = await edge(
      edgeFigures('haproxy', { haproxyTimeoutServerMs: 20_000, timeScale: 0.1 }),
      up.port,
    );
    const c = client(port, '/g/p.git/ssh-receive-pack');
    c.chunk('0000');
    const start = Date.now();
    const closedAt = await c.closed;
    within10(closedAt - start, 2000);
  });

  it('with option http-buffer-request on the tunnel paths, the upstream sees the request after its body; off, before', {
    timeout: 30_000,
  }, async () => {
    for (const buffer of [true, false]) {
      const up = await upstream((req, res) => {
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      const port = await edge(edgeFigures('haproxy', { bufferSshPackBody: buffer }), up.port);
      const c = client(port);
      c.chunk('first');
      await sleep(1000);
      const endAt = Date.now();
      c.chunk('second');
      c.end();
      await sleep(500);
      expect(up.arrived.length, `buffer ${buffer}`).toBe(1);
      const arrived = up.arrived[0] as number;
      if (buffer) expect(arrived).toBeGreaterThanOrEqual(endAt);
      else expect(arrived).toBeLessThan(endAt);
      c.destroy();
    }
  });

  it('streams the response as it comes', { timeout: 30_000 }, async () => {
    let secondAt = 0;
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200);
      res.write('first-part');
      setTimeout(() => {
        secondAt = Date.now();
        res.end('second-part');
      }, 1000);
    });
    const port = await edge(edgeFigures('haproxy'), up.port);
    const c = client(port, '/other');
    c.end();
    await sleep(1500);
    const first = c.got.find((g) => g.text.includes('first-part'));
    expect(first?.at).toBeLessThan(secondAt);
    c.destroy();
  });
});
