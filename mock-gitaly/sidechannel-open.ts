import type { Duplex } from 'node:stream';
import type { Metadata } from '@grpc/grpc-js';
import { encodeSidechannelId, SIDECHANNEL_ID_METADATA, SIDECHANNEL_MAGIC } from '../lib/sidechannel.js';
import { SidechannelFailed } from './errors.js';

/** What opening a sidechannel needs from the caller's yamux session. */
export interface SidechannelSession {
  open(): Duplex;
  readonly closed: boolean;
}

export interface OpenSidechannelOptions {
  /** How long to wait for the client's `ok` (Gitaly: 5 s, `sidechannelTimeout`). */
  timeoutMs: number;
  /** Emulation: write a different id than the call's, so the client must refuse the stream. */
  wrongId?: boolean;
  /** Aborts the handshake (the call was cancelled). */
  signal?: AbortSignal;
}

/** Gitaly's prefix for every failure to open the sidechannel (the typo is Gitaly's). */
const PREFIX = 'opennig sidechannel: sidechannel: ';

/**
 * The call's id as Gitaly reads it: the **last** `gitaly-sidechannel-id` value, parsed as a signed
 * 64-bit decimal; a value that does not parse gives 0, as Go's ignored `strconv.ParseInt` error does.
 */
export function sidechannelId(metadata: Metadata): bigint {
  const values = metadata.get(SIDECHANNEL_ID_METADATA);
  if (values.length === 0) throw SidechannelFailed(`${PREFIX}sidechannel-id not found in incoming metadata`);
  const last = String(values[values.length - 1]);
  if (!/^[+-]?\d+$/.test(last)) return 0n;
  const id = BigInt(last);
  return id === BigInt.asIntN(64, id) ? id : 0n;
}

/** An id no registry holds for this call: the high bit flipped. */
export function wrongSidechannelId(id: bigint): bigint {
  return BigInt.asIntN(64, id ^ (1n << 62n));
}

/** hashicorp/yamux's texts for a stream that ended or broke, as Gitaly's errors quote them. */
function readFailure(err: Error | undefined, received: number, session: SidechannelSession): string {
  if (session.closed) return 'session shutdown';
  if (err === undefined) return received === 0 ? 'EOF' : 'unexpected EOF';
  const code = (err as { code?: unknown }).code;
  return code === 'YAMUX_STREAM_RESET' ? 'connection reset' : err.message;
}

/** Reads exactly 2 bytes (the confirmation); whatever follows is put back for the caller. */
function readConfirmation(stream: Duplex, session: SidechannelSession, opts: OpenSidechannelOptions) {
  return new Promise<Buffer>((resolve, reject) => {
    let got = Buffer.alloc(0);
    const settle = (err: string | undefined) => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      opts.signal?.removeEventListener('abort', onAbort);
      stream.pause();
      if (err !== undefined) return reject(SidechannelFailed(`${PREFIX}receive confirmation: ${err}`));
      if (got.length > 2) stream.unshift(got.subarray(2));
      resolve(got.subarray(0, 2));
    };
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 2) settle(undefined);
    };
    const onEnd = () => settle(readFailure(undefined, got.length, session));
    const onError = (err: Error) => settle(readFailure(err, got.length, session));
    const onClose = () => settle(readFailure(new Error('stream closed'), got.length, session));
    const onAbort = () => settle('context canceled');
    const timer = setTimeout(() => settle('i/o deadline reached'), opts.timeoutMs);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onClose);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
  });
}

/**
 * Gitaly's `OpenSidechannel`: opens a yamux stream on the caller's session, writes `sidechannel` and
 * the 8-byte big-endian id (two writes, so two Data frames), and waits for the client's `ok`. Every
 * failure is `Internal` "opennig sidechannel: sidechannel: …" and half-closes the stream. The stream
 * comes back paused, positioned right after `ok`.
 */
export async function openSidechannel(
  session: SidechannelSession,
  id: bigint,
  opts: OpenSidechannelOptions,
): Promise<Duplex> {
  let stream: Duplex;
  try {
    stream = session.open();
  } catch (err) {
    const reason = session.closed ? 'session shutdown' : (err as Error).message;
    throw SidechannelFailed(`${PREFIX}open stream: ${reason}`, err);
  }
  // Failures surface through the handshake; later ones through the caller's own listener.
  stream.on('error', () => {});
  try {
    stream.write(SIDECHANNEL_MAGIC);
    stream.write(encodeSidechannelId(opts.wrongId ? wrongSidechannelId(id) : id));
    const confirmation = await readConfirmation(stream, session, opts);
    if (confirmation.toString('latin1') !== 'ok') {
      throw SidechannelFailed(`${PREFIX}expected ok, got ${JSON.stringify(confirmation.toString('latin1'))}`);
    }
    return stream;
  } catch (err) {
    stream.end();
    stream.resume();
    throw err;
  }
}
