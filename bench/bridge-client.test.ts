import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeExitStatus, encodeFrame, ResponseFrame } from '../lib/framing.js';
import { decodeAll } from '../lib/pktline.js';
import { type BridgeProtocol, uploadPack, uploadPackBody } from './bridge-client.js';
import { drain } from './drain.js';

const SHA = 'a'.repeat(40);

describe('uploadPackBody', () => {
  it('is a v0 fetch: wants with capabilities on the first, flush, done', () => {
    const packets = decodeAll(uploadPackBody([SHA, 'b'.repeat(40)]));
    expect(packets.map((p) => (p.kind === 'data' ? p.payload.toString() : p.kind))).toEqual([
      `want ${SHA} side-band-64k ofs-delta no-progress\n`,
      `want ${'b'.repeat(40)}\n`,
      'flush',
      'done\n',
    ]);
    expect(() => uploadPackBody([])).toThrow();
  });
});

/** What the fake bridge answers, chosen by the project path of the request. */
function answer(project: string, body: Buffer): { status: number; framed: boolean; frames: Buffer[] } {
  const stdout = encodeFrame(ResponseFrame.stdout, Buffer.alloc(100_000, 7));
  switch (project) {
    case 'ok':
      return {
        status: 200,
        framed: true,
        frames: [encodeFrame(ResponseFrame.stdout, body), stdout, encodeExitStatus(0)],
      };
    case 'exit1':
      return {
        status: 200,
        framed: true,
        frames: [encodeFrame(ResponseFrame.stderr, Buffer.from('fatal: boom\n')), encodeExitStatus(1)],
      };
    case 'error-frame':
      return {
        status: 200,
        framed: true,
        frames: [
          stdout,
          encodeFrame(ResponseFrame.error, Buffer.from('{"code":"x","message":"gitaly gone"}')),
        ],
      };
    case 'unframed':
      return { status: 200, framed: false, frames: [Buffer.from('0008NAK\n')] };
    default:
      return { status: 403, framed: false, frames: [Buffer.from('denied')] };
  }
}

describe('bridge-only clients against a fake bridge', () => {
  let h2: http2.Http2Server;
  let h1: http.Server;
  const urls: Record<BridgeProtocol, string> = { h2: '', http1: '' };
  const seen: Array<{ jwt: unknown; framing: unknown; chunked: boolean }> = [];

  const handle = async (
    path: string,
    headers: http.IncomingHttpHeaders,
    req: AsyncIterable<Buffer>,
    reply: (status: number, h: Record<string, string>, body: Buffer) => void,
  ) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c);
    seen.push({
      jwt: headers['gitlab-shell-api-request'],
      framing: headers['gitlab-cells-response-framing'],
      chunked: headers['transfer-encoding'] === 'chunked',
    });
    const project = /^\/(.+)\.git\/ssh-upload-pack$/.exec(path)?.[1] ?? '';
    const a = answer(project, Buffer.concat(chunks));
    reply(a.status, a.framed ? { 'gitlab-cells-response-framing': 'v1' } : {}, Buffer.concat(a.frames));
  };

  beforeAll(async () => {
    h2 = http2.createServer();
    h2.on('stream', (stream, headers) => {
      void handle(String(headers[':path']), headers, stream, (status, h, body) => {
        stream.respond({ ':status': status, ...h });
        stream.end(body);
      });
    });
    h1 = http.createServer((req, res) => {
      void handle(req.url ?? '', req.headers, req, (status, h, body) => {
        res.writeHead(status, h);
        res.end(body);
      });
    });
    for (const [server, key] of [
      [h2, 'h2'],
      [h1, 'http1'],
    ] as const) {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      urls[key] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
  });
  afterAll(async () => {
    await new Promise((r) => h2.close(r));
    await new Promise((r) => h1.close(r));
  });

  const call = (protocol: BridgeProtocol, project: string) =>
    uploadPack(protocol, {
      bridgeUrl: urls[protocol],
      project,
      wants: [SHA],
      jwt: 'jwt-value',
      timeoutMs: 10_000,
    });

  for (const protocol of ['h2', 'http1'] as const) {
    it(`${protocol}: sends the JWT, asks for framing, counts stdout and checks the exit status`, async () => {
      seen.length = 0;
      const r = await call(protocol, 'ok');
      expect(r.stdoutBytes).toBe(uploadPackBody([SHA]).length + 100_000);
      expect(seen[0]).toMatchObject({ jwt: 'jwt-value', framing: 'v1' });
      if (protocol === 'http1') expect(seen[0]?.chunked).toBe(true);
    });

    it(`${protocol}: fails loudly on a refusal, a non-zero exit, an error frame or no framing`, async () => {
      await expect(call(protocol, 'nope')).rejects.toThrow(/answered 403: denied/);
      await expect(call(protocol, 'exit1')).rejects.toThrow(/exit status 1: fatal: boom/);
      await expect(call(protocol, 'error-frame')).rejects.toThrow(/gitaly gone/);
      await expect(call(protocol, 'unframed')).rejects.toThrow(/framing/);
    });
  }
});

describe('drain', () => {
  it('reads everything and holds a bounded rate', async () => {
    const chunks = Array.from({ length: 16 }, () => Buffer.alloc(16 * 1024));
    const started = performance.now();
    const r = await drain(Readable.from(chunks), {
      rateBytesPerSecond: 1024 * 1024,
      timeoutMs: 10_000,
      onChunk: () => {},
    });
    expect(r.bytes).toBe(256 * 1024);
    // 256 KiB at 1 MiB/s: about 250 ms; the last chunk needs no wait, so at least ~230 ms.
    expect(performance.now() - started).toBeGreaterThan(200);
  });

  it('rejects a stream that is destroyed before its end and one that never ends', async () => {
    const broken = new Readable({ read() {} });
    setTimeout(() => broken.destroy(), 10);
    await expect(drain(broken, { timeoutMs: 5_000, onChunk: () => {} })).rejects.toThrow(
      /closed before its end/,
    );
    await expect(drain(new Readable({ read() {} }), { timeoutMs: 50, onChunk: () => {} })).rejects.toThrow(
      /no end of stream/,
    );
  });
});
