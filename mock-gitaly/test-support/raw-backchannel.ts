import * as http2 from 'node:http2';
import * as net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { gitalyAuthHeader } from '../../lib/gitaly-auth.js';
import { loadSshService } from '../../lib/proto.js';
import {
  BACKCHANNEL_MAGIC,
  decodeSidechannelId,
  encodeStdin,
  MAGIC_LENGTH,
  SIDECHANNEL_OK,
  STDIN_FLUSH,
} from '../../lib/sidechannel.js';
import { type FrameHeader, FrameType, YamuxSession, type YamuxStream } from '../../lib/yamux/index.js';

/**
 * A backchannel client at the byte level, for what the real client library would hide: the frame
 * trace, streams the server opens (eager backchannel, sidechannels that we answer late, wrongly or
 * never) and killing the socket mid-call. gRPC runs over stream 1 with Node's http2 and a hand-made
 * unary call (5-byte prefix, trailers), so nothing here depends on grpc-js client internals.
 */
export interface RawUnaryResult {
  code: number;
  details: string;
  response: Record<string, unknown> | undefined;
}

export class RawBackchannel {
  readonly socket: net.Socket;
  readonly session: YamuxSession;
  readonly frames: Array<{ dir: 'in' | 'out'; header: FrameHeader }> = [];
  readonly inbound: YamuxStream[] = [];
  private h2: http2.ClientHttp2Session | undefined;
  private waiters: Array<() => void> = [];

  private constructor(socket: net.Socket, onStream?: (stream: YamuxStream) => void) {
    this.socket = socket;
    socket.write(BACKCHANNEL_MAGIC);
    this.session = new YamuxSession(socket, {
      role: 'client',
      onFrame: (dir, header) => this.frames.push({ dir, header }),
    });
    this.session.on('stream', (stream) => {
      stream.on('error', () => {});
      this.inbound.push(stream);
      onStream?.(stream);
      for (const wake of this.waiters) wake();
    });
    socket.on('error', () => {});
  }

  static connect(port: number, onStream?: (stream: YamuxStream) => void): Promise<RawBackchannel> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawBackchannel(socket, onStream)));
      socket.once('error', reject);
    });
  }

  /** Opens stream 1 and runs HTTP/2 on it (once). */
  http2(): http2.ClientHttp2Session {
    if (!this.h2) {
      const stream = this.session.open();
      stream.on('error', () => {});
      this.h2 = http2.connect('http://gitaly', { createConnection: () => stream });
      this.h2.on('error', () => {});
    }
    return this.h2;
  }

  /** A unary `gitaly.SSHService` call on stream 1; `metadata` as plain headers. */
  unary(method: string, request: unknown, metadata: Record<string, string>): Promise<RawUnaryResult> {
    const def = loadSshService().service[method] as grpc.MethodDefinition<unknown, Record<string, unknown>>;
    const body = def.requestSerialize(request);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(body.length, 1);
    const req = this.http2().request({
      ':method': 'POST',
      ':path': def.path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...metadata,
    });
    req.end(Buffer.concat([prefix, body]));
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let headers: http2.IncomingHttpHeaders = {};
      req.on('response', (h) => {
        headers = h;
      });
      req.on('data', (c: Buffer) => chunks.push(c));
      const finish = (trailers: http2.IncomingHttpHeaders) => {
        const all = Buffer.concat(chunks);
        const status = trailers['grpc-status'] ?? headers['grpc-status'];
        const message = String(trailers['grpc-message'] ?? headers['grpc-message'] ?? '');
        resolve({
          code: status === undefined ? -1 : Number(status),
          details: decodeURIComponent(message),
          response: all.length >= 5 ? def.responseDeserialize(all.subarray(5)) : undefined,
        });
      };
      let trailers: http2.IncomingHttpHeaders = {};
      req.on('trailers', (t) => {
        trailers = t;
      });
      req.on('close', () => finish(trailers));
      req.on('error', () => {});
    });
  }

  /** The next stream the server opens (already ACKed by the session). */
  async nextInbound(index: number, timeoutMs = 5000): Promise<YamuxStream> {
    const deadline = Date.now() + timeoutMs;
    while (this.inbound.length <= index) {
      if (Date.now() > deadline) throw new Error(`no inbound stream #${index} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((w) => w !== wake);
          resolve();
        };
        const timer = setTimeout(wake, 50);
        this.waiters.push(wake);
      });
    }
    return this.inbound[index] as YamuxStream;
  }

  close(): void {
    this.h2?.destroy();
    this.session.destroy();
    this.socket.destroy();
  }
}

/** Reads the sidechannel preamble (`sidechannel` + id) from a stream the server opened. */
export function readPreamble(stream: YamuxStream): Promise<{ magic: string; id: bigint }> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < MAGIC_LENGTH + 8) return;
      stream.off('data', onData);
      stream.pause();
      if (got.length > MAGIC_LENGTH + 8) stream.unshift(got.subarray(MAGIC_LENGTH + 8));
      resolve({
        magic: got.subarray(0, MAGIC_LENGTH).toString('latin1'),
        id: decodeSidechannelId(got.subarray(MAGIC_LENGTH, MAGIC_LENGTH + 8)),
      });
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new Error('stream ended before its preamble')));
  });
}

/**
 * A whole sidechannel fetch by hand on a raw backchannel: the unary call with `id`, `ok`, `stdin`
 * (framed, then the flush), and the response read to its end. Resolves with the preamble, the bytes
 * received and the unary result.
 */
export async function rawSidechannelFetch(
  r: RawBackchannel,
  opts: { token: string; request: unknown; stdin: Buffer; id?: string },
) {
  const md = { authorization: gitalyAuthHeader(opts.token), 'gitaly-sidechannel-id': opts.id ?? '7' };
  const result = r.unary('SSHUploadPackWithSidechannel', opts.request, md);
  const stream = await r.nextInbound(r.inbound.length);
  const preamble = await readPreamble(stream);
  stream.write(SIDECHANNEL_OK);
  stream.write(Buffer.concat([...encodeStdin(opts.stdin), STDIN_FLUSH]));
  let bytes = 0;
  stream.on('data', (c: Buffer) => {
    bytes += c.length;
  });
  stream.resume();
  await new Promise((resolve) => stream.once('end', resolve));
  return { preamble, bytes, ...(await result) };
}

/** Payload lengths of the Data frames the server sent. */
export function inboundDataFrames(r: RawBackchannel): number[] {
  return r.frames
    .filter((f) => f.dir === 'in' && f.header.type === FrameType.Data)
    .map((f) => f.header.length);
}
