import net from 'node:net';

/** Raw HTTP/2 frames, for clients no well-behaved library would be. */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
export const FrameType = {
  data: 0x0,
  headers: 0x1,
  rstStream: 0x3,
  settings: 0x4,
  continuation: 0x9,
} as const;
export const Flag = { endStream: 0x1, endHeaders: 0x4 } as const;

export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK: a literal header field without indexing, new name (RFC 7541 6.2.2), short strings only. */
export function literal(name: string, value: string): Buffer {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  if (n.length > 126 || v.length > 126) throw new Error('literal() is for short strings');
  return Buffer.concat([Buffer.from([0x00, n.length]), n, Buffer.from([v.length]), v]);
}

/** `:method GET`, `:scheme http`, `:path /` from the static table, then `:authority`. */
export function requestHeaderBlock(authority: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x82, 0x86, 0x84]),
    Buffer.from([0x01, authority.length]),
    Buffer.from(authority),
  ]);
}

export interface RawConn {
  socket: net.Socket;
  /** Bytes received so far (when reading). */
  received(): Buffer;
  closed: Promise<void>;
  /** Writes, resolving false once the peer has closed (EPIPE/ECONNRESET) instead of throwing. */
  write(data: Buffer | string): Promise<boolean>;
}

/** A TCP connection to `host:port`; with `read: false` nothing is ever read from it. */
export function rawConnect(address: string, opts: { read?: boolean } = {}): Promise<RawConn> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(':')),
    Number(address.slice(address.lastIndexOf(':') + 1)),
  ];
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host);
    const chunks: Buffer[] = [];
    let gone = false;
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => {
      gone = true;
    });
    socket.once('close', () => {
      gone = true;
    });
    if (opts.read === false) socket.pause();
    else socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        closed,
        write: (data) =>
          new Promise((done) => {
            if (gone || socket.destroyed) return done(false);
            socket.write(data, (err) => done(!err && !gone));
          }),
      }),
    );
    socket.once('error', reject);
  });
}

/** `host:port` of an `http://host:port` URL. */
export const hostPort = (url: string) => new URL(url).host;
