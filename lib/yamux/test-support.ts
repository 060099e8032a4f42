import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Duplex, type Readable, type Writable } from 'node:stream';
import { FrameDecoder } from './decoder.js';
import { encodeHeader, type FrameHeader, type FrameType } from './frame.js';
import type { YamuxOptions } from './options.js';
import { YamuxSession } from './session.js';
import type { YamuxStream } from './stream.js';

/**
 * Helpers for yamux tests (and for other modules' tests that need a session pair). Not used by the library.
 */

/**
 * Two cross-connected Duplexes that deliver on a later turn of the event loop, like a socket, so tests do
 * not depend on synchronous re-entry.
 */
export function duplexPair(): [Duplex, Duplex] {
  const make = (peer: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        setImmediate(() => {
          peer().push(chunk);
          cb();
        });
      },
      final(cb) {
        setImmediate(() => {
          peer().push(null);
          cb();
        });
      },
      destroy(err, cb) {
        const other = peer();
        setImmediate(() => other.destroy());
        cb(err);
      },
    });
  const a: Duplex = make(() => b);
  const b: Duplex = make(() => a);
  return [a, b];
}

export interface SocketPair {
  client: Duplex;
  server: Duplex;
  close(): Promise<void>;
}

/** A real TCP connection over loopback; `close()` destroys both ends and the listener. */
export async function tcpPair(): Promise<SocketPair> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const client = net.connect(port, '127.0.0.1');
  await once(client, 'connect');
  const [serverSide] = await accepted;
  return {
    client,
    server: serverSide,
    async close() {
      client.destroy();
      serverSide.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function memoryPair(): SocketPair {
  const [client, server] = duplexPair();
  return {
    client,
    server,
    async close() {
      client.destroy();
      server.destroy();
    },
  };
}

export interface SessionPair {
  client: YamuxSession;
  server: YamuxSession;
  sockets: SocketPair;
  close(): Promise<void>;
}

export async function sessionPair(
  transport: 'tcp' | 'memory',
  clientOpts: Partial<YamuxOptions> = {},
  serverOpts: Partial<YamuxOptions> = {},
): Promise<SessionPair> {
  const sockets = transport === 'tcp' ? await tcpPair() : memoryPair();
  const client = new YamuxSession(sockets.client, { ...clientOpts, role: 'client' });
  const server = new YamuxSession(sockets.server, { ...serverOpts, role: 'server' });
  return {
    client,
    server,
    sockets,
    async close() {
      client.close();
      server.close();
      await sockets.close();
    },
  };
}

/**
 * Streams are destroyed with an error when their session ends, and an 'error' nobody listens to would crash
 * the test run; tests that leave streams open at cleanup mark them with this.
 */
export function quiet<T extends Duplex>(stream: T): T {
  stream.on('error', () => undefined);
  return stream;
}

/** The next inbound stream of `session` (with a no-op 'error' listener, see `quiet`). */
export async function nextStream(session: YamuxSession): Promise<YamuxStream> {
  const [stream] = await once(session, 'stream');
  return quiet(stream as YamuxStream);
}

/** Reads to 'end' without destroying the stream afterwards (a for-await loop would, sending RST). */
export function readAll(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

/** Resolves when the stream has emitted 'close', even if that already happened. */
export function closed(stream: Readable | Writable): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return once(stream, 'close').then(() => undefined);
}

/** Writes `data` in uneven pieces, honouring backpressure, then ends. */
export async function writeAll(stream: Writable, data: Buffer): Promise<void> {
  let offset = 0;
  let step = 1;
  while (offset < data.length) {
    step = (step * 7919) % 200_000 || 1;
    const piece = data.subarray(offset, offset + step);
    offset += piece.length;
    if (!stream.write(piece)) await once(stream, 'drain');
  }
  stream.end();
}

export function sha256(data: Buffer | Buffer[]): string {
  const h = createHash('sha256');
  for (const b of Array.isArray(data) ? data : [data]) h.update(b);
  return h.digest('hex');
}

export interface RawFrame {
  header: FrameHeader;
  payload: Buffer;
}

/**
 * A hand-driven yamux peer on a raw Duplex: records every frame it receives and sends frames built with
 * encodeHeader, to imitate libp2p or a misbehaving peer byte for byte.
 */
export class RawPeer {
  readonly frames: RawFrame[] = [];
  readonly bytes: Buffer[] = [];
  private waiters: Array<() => void> = [];
  private readonly decoder: FrameDecoder;
  private current: RawFrame | undefined;

  /** `onFrame` sees every frame as it completes, before `waitFor` callers do. */
  constructor(
    readonly socket: Duplex,
    private readonly onFrame?: (frame: RawFrame) => void,
  ) {
    this.decoder = new FrameDecoder({
      header: (header) => {
        const frame = { header, payload: Buffer.alloc(0) };
        if (header.type === 0 && header.length > 0) this.current = frame;
        else this.record(frame);
      },
      data: (_id, chunk, last) => {
        const frame = this.current!;
        frame.payload = Buffer.concat([frame.payload, chunk]);
        if (last) this.record(frame);
      },
    });
    socket.on('data', (chunk: Buffer) => {
      this.bytes.push(chunk);
      this.decoder.push(chunk);
    });
    socket.on('error', () => undefined);
  }

  send(type: FrameType, flags: number, streamId: number, length: number, payload?: Buffer): void {
    this.socket.write(encodeHeader({ type, flags, streamId, length }));
    if (payload !== undefined) this.socket.write(payload);
  }

  /** Resolves with the first received frame (in order, from `from`) that matches. */
  async waitFor(match: (f: RawFrame) => boolean, from = 0): Promise<RawFrame> {
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private record(frame: RawFrame): void {
    this.frames.push(frame);
    this.onFrame?.(frame);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** Our session on one end of an in-memory pair, a hand-driven RawPeer on the other. */
export function rawPeerSession(role: 'client' | 'server', opts: Partial<YamuxOptions> = {}) {
  const sockets = memoryPair();
  const session = new YamuxSession(sockets.client, { ...opts, role });
  const raw = new RawPeer(sockets.server);
  const close = async () => {
    session.close();
    await sockets.close();
  };
  return { session, raw, close };
}

export const hex = (h: Omit<FrameHeader, 'version'>): string => encodeHeader(h).toString('hex');
