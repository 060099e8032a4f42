import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http2, { type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readBodyLimited } from '../../lib/streams.js';
import { waitUntil } from '../../test/helpers/poll.js';
import { type CellTransport, createCellTransport, h2SafeHeaders } from './transport.js';

type Closable = { close(cb?: () => void): unknown };
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function track(transport: CellTransport): CellTransport {
  cleanups.push(() => transport.close());
  return transport;
}

async function listen<
  T extends Closable & { listen: (port: number, host: string, cb: () => void) => unknown },
>(server: T, onClose: () => void = () => {}): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        onClose();
        server.close(() => resolve());
      }),
  );
  return ((server as unknown as { address(): AddressInfo }).address() as AddressInfo).port;
}

/** An echo server: answers with the protocol version, the path and the request body. */
function echo(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => res.end(`${req.httpVersion} ${req.url} ${Buffer.concat(chunks).toString()}`));
}

describe('h2c transport', () => {
  it('reuses one session, streams bodies, and reconnects when the session is gone', async () => {
    const server = http2.createServer(echo);
    const sessions: http2.ServerHttp2Session[] = [];
    server.on('session', (s) => sessions.push(s));
    const port = await listen(server, () => {
      for (const s of sessions) s.destroy();
    });
    const t = track(createCellTransport(`http://127.0.0.1:${port}/prefix`, {}, 'h2c'));

    const call = await t.open({
      method: 'POST',
      path: '/a',
      headers: { connection: 'close' },
      streamBody: true,
    });
    call.body.write('he');
    call.body.end('llo');
    const res = await call.response;
    expect(res.status).toBe(200);
    expect((await readBodyLimited(res.body, 1000)).body.toString()).toBe('2.0 /prefix/a hello');

    const second = await t.open({ method: 'GET', path: '/b', headers: {}, streamBody: false });
    expect((await readBodyLimited((await second.response).body, 1000)).body.toString()).toBe(
      '2.0 /prefix/b ',
    );
    expect(sessions).toHaveLength(1);

    sessions[0]?.destroy();
    await waitUntil(() => sessions[0]?.destroyed, 2000, 'the session to close');
    await new Promise((r) => setTimeout(r, 50));
    const third = await t.open({ method: 'GET', path: '/c', headers: {}, streamBody: false });
    expect((await third.response).status).toBe(200);
    expect(sessions).toHaveLength(2);
  });

  it('cancels a stream with RST_STREAM CANCEL', async () => {
    const server = http2.createServer();
    const codes: number[] = [];
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.write('partial');
      stream.on('close', () => codes.push(stream.rstCode));
    });
    const port = await listen(server);
    const t = track(createCellTransport(`http://127.0.0.1:${port}`, {}, 'h2c'));
    const call = await t.open({ method: 'POST', path: '/x', headers: {}, streamBody: true });
    await call.response;
    call.cancel();
    await waitUntil(() => codes.length > 0, 2000, 'the server to see the reset');
    expect(codes).toEqual([http2.constants.NGHTTP2_CANCEL]);
  });

  it('rejects the response when the cell is unreachable', async () => {
    const server = http2.createServer();
    const port = await listen(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const t = track(createCellTransport(`http://127.0.0.1:${port}`, {}, 'h2c'));
    const call = await t.open({ method: 'GET', path: '/', headers: {}, streamBody: false });
    await expect(call.response).rejects.toThrow();
  });
});

describe('https transport', () => {
  let certDir: string;
  let key: Buffer;
  let cert: Buffer;

  beforeAll(() => {
    certDir = mkdtempSync(join(tmpdir(), 'router-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    key = readFileSync(join(certDir, 'key.pem'));
    cert = readFileSync(join(certDir, 'cert.pem'));
  });

  afterAll(() => {
    rmSync(certDir, { recursive: true, force: true });
  });

  it('speaks HTTP/2 with ALPN', async () => {
    const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, echo);
    const sessions: http2.ServerHttp2Session[] = [];
    server.on('session', (s) => sessions.push(s));
    const port = await listen(server, () => {
      for (const s of sessions) s.destroy();
    });
    const t = track(createCellTransport(`https://127.0.0.1:${port}`, { ca: cert }));
    const call = await t.open({ method: 'POST', path: '/h2', headers: {}, streamBody: true });
    call.body.end('body');
    expect((await readBodyLimited((await call.response).body, 1000)).body.toString()).toBe('2.0 /h2 body');
  });

  it('falls back to HTTP/1.1 when the cell has no HTTP/2', async () => {
    const server = https.createServer({ key, cert }, echo);
    const port = await listen(server, () => server.closeAllConnections());
    const t = track(createCellTransport(`https://127.0.0.1:${port}`, { ca: cert }));
    const call = await t.open({ method: 'POST', path: '/h1', headers: {}, streamBody: true });
    call.body.end('body');
    expect((await readBodyLimited((await call.response).body, 1000)).body.toString()).toBe('1.1 /h1 body');
  });

  it('refuses a certificate it does not trust', async () => {
    const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, echo);
    const port = await listen(server);
    const t = track(createCellTransport(`https://127.0.0.1:${port}`));
    await expect(
      t.open({ method: 'GET', path: '/', headers: {}, streamBody: false }).then((c) => c.response),
    ).rejects.toThrow(/self.signed|certificate/i);
  });
});

describe('h2SafeHeaders', () => {
  it('drops pseudo-headers, host, connection-specific headers and those Connection names', () => {
    expect(
      h2SafeHeaders({
        ':path': '/x',
        Host: 'cell.example',
        connection: 'keep-alive, x-hop',
        'keep-alive': 'timeout=5',
        'x-hop': '1',
        te: 'trailers',
        'Transfer-Encoding': 'chunked',
        'X-Request-Id': 'r1',
      }),
    ).toEqual({ 'x-request-id': 'r1' });
  });
});
