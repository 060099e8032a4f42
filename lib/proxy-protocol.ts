/**
 * @file PROXY protocol v1 (text) and v2 (binary) headers, as HAProxy specifies them and
 * gitlab-sshd reads them (go-proxyproto): the header a load balancer puts before the client's
 * bytes to tell the real client address. `parseProxyHeader` decides from what arrived so far;
 * `readProxyHeader` reads a socket until it knows, within a deadline, and leaves every byte after
 * the header unread on the socket.
 */
import { isIP, type Socket } from 'node:net';
import { ioDeadline } from './io-deadline.js';

export interface ProxyAddress {
  address: string;
  port: number;
}

export interface ProxyHeader {
  version: 1 | 2;
  /** `local`: a health check by the proxy itself (v2 LOCAL, v1 UNKNOWN): no client address. */
  command: 'proxy' | 'local';
  source: ProxyAddress | undefined;
  destination: ProxyAddress | undefined;
}

export type ProxyParse =
  | { kind: 'none' }
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'header'; header: ProxyHeader; length: number };

const V1_PREFIX = Buffer.from('PROXY ');
/** v1 headers are at most 107 bytes including CRLF. */
const V1_MAX = 107;
export const V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);
const V2_FIXED = 16;

/** True while `buf` could still become `prefix`. */
function startsLike(buf: Buffer, prefix: Buffer): boolean {
  const n = Math.min(buf.length, prefix.length);
  return buf.subarray(0, n).equals(prefix.subarray(0, n));
}

export function parseProxyHeader(buf: Buffer): ProxyParse {
  if (buf.length === 0) return { kind: 'incomplete' };
  if (startsLike(buf, V2_SIGNATURE)) return buf.length < V2_FIXED ? { kind: 'incomplete' } : parseV2(buf);
  if (startsLike(buf, V1_PREFIX))
    return buf.length < V1_PREFIX.length ? { kind: 'incomplete' } : parseV1(buf);
  return { kind: 'none' };
}

function parseV1(buf: Buffer): ProxyParse {
  const end = buf.indexOf('\r\n');
  if (end < 0) {
    return buf.length >= V1_MAX ? { kind: 'invalid', reason: 'v1 header too long' } : { kind: 'incomplete' };
  }
  if (end + 2 > V1_MAX) return { kind: 'invalid', reason: 'v1 header too long' };
  const words = buf.subarray(0, end).toString('latin1').split(' ');
  const length = end + 2;
  if (words[1] === 'UNKNOWN') {
    return {
      kind: 'header',
      length,
      header: { version: 1, command: 'local', source: undefined, destination: undefined },
    };
  }
  const [, proto, src, dst, sport, dport] = words;
  const family = proto === 'TCP4' ? 4 : proto === 'TCP6' ? 6 : 0;
  if (words.length !== 6 || family === 0) return { kind: 'invalid', reason: 'v1 header malformed' };
  const source = v1Address(src, sport, family);
  const destination = v1Address(dst, dport, family);
  if (!source || !destination) return { kind: 'invalid', reason: 'v1 header has a bad address or port' };
  return { kind: 'header', length, header: { version: 1, command: 'proxy', source, destination } };
}

function v1Address(
  address: string | undefined,
  port: string | undefined,
  family: 4 | 6,
): ProxyAddress | undefined {
  if (address === undefined || port === undefined || isIP(address) !== family) return undefined;
  if (!/^(0|[1-9]\d{0,4})$/.test(port) || Number(port) > 65535) return undefined;
  return { address, port: Number(port) };
}

function parseV2(buf: Buffer): ProxyParse {
  const verCmd = buf[12] as number;
  if (verCmd >> 4 !== 2) return { kind: 'invalid', reason: 'v2 header with an unknown version' };
  const command = verCmd & 0x0f;
  if (command > 1) return { kind: 'invalid', reason: 'v2 header with an unknown command' };
  const length = V2_FIXED + buf.readUInt16BE(14);
  if (buf.length < length) return { kind: 'incomplete' };
  const local = { version: 2, command: 'local', source: undefined, destination: undefined } as const;
  if (command === 0) return { kind: 'header', length, header: local };
  const family = (buf[13] as number) >> 4;
  const body = buf.subarray(V2_FIXED, length);
  // AF_INET and AF_INET6 carry addresses; AF_UNSPEC and AF_UNIX are kept as "no client address".
  const size = family === 1 ? 4 : family === 2 ? 16 : 0;
  if (size === 0) return { kind: 'header', length, header: { ...local, command: 'proxy' } };
  if (body.length < 2 * size + 4) return { kind: 'invalid', reason: 'v2 address block too short' };
  const addr = (offset: number) => formatIp(body.subarray(offset, offset + size));
  return {
    kind: 'header',
    length,
    header: {
      version: 2,
      command: 'proxy',
      source: { address: addr(0), port: body.readUInt16BE(2 * size) },
      destination: { address: addr(size), port: body.readUInt16BE(2 * size + 2) },
    },
  };
}

function formatIp(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  // The shortest form (RFC 5952): the longest run of two or more zero groups becomes "::".
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i >= 2) best = { start: i, len: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.len).join(':')}`;
}

export class ProxyHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProxyHeaderError';
  }
}

/**
 * Reads the socket until a header is complete or its absence is certain, then pushes every byte
 * after the header back (`unshift`) and leaves the socket paused. Resolves undefined when the
 * client's first bytes are no header, or when nothing came before `timeoutMs` (a client that waits
 * for the server to speak first); rejects with `ProxyHeaderError` on a malformed header, a header
 * that did not complete in time, or a socket that closed first.
 */
export function readProxyHeader(socket: Socket, timeoutMs: number): Promise<ProxyHeader | undefined> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    let settled = false;
    const finish = (err: Error | undefined, header?: ProxyHeader, rest?: Buffer) => {
      if (settled) return;
      settled = true;
      cancelDeadline();
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (err) return reject(err);
      if (rest && rest.length > 0) socket.unshift(rest);
      resolve(header);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const parsed = parseProxyHeader(buffered);
      if (parsed.kind === 'incomplete') return;
      if (parsed.kind === 'none') return finish(undefined, undefined, buffered);
      if (parsed.kind === 'invalid') return finish(new ProxyHeaderError(parsed.reason));
      finish(undefined, parsed.header, buffered.subarray(parsed.length));
    };
    const onClose = () => finish(new ProxyHeaderError('connection closed before the PROXY header'));
    // Bytes that came in time count even when the loop was too busy to read them (`io-deadline.ts`).
    const cancelDeadline = ioDeadline(timeoutMs, () => {
      if (buffered.length === 0) finish(undefined);
      else finish(new ProxyHeaderError(`PROXY header incomplete after ${timeoutMs} ms`));
    });
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}
