import type { Duplex } from 'node:stream';
import type { Metadata } from '@grpc/grpc-js';
import { type ReadExactlyResult, readExactly } from '../lib/read-exactly.js';
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

/** hashicorp/yamux's texts for a confirmation that did not arrive, as Gitaly's errors quote them. */
function readFailure(short: Exclude<ReadExactlyResult, { ok: true }>, session: SidechannelSession): string {
  if (short.reason === 'timeout') return 'i/o deadline reached';
  if (short.reason === 'aborted') return 'context canceled';
  if (session.closed) return 'session shutdown';
  if (short.reason === 'end') return short.received === 0 ? 'EOF' : 'unexpected EOF';
  if (short.reason === 'close') return 'stream closed';
  const code = (short.err as { code?: unknown } | undefined)?.code;
  return code === 'YAMUX_STREAM_RESET' ? 'connection reset' : String(short.err?.message);
}

/** Reads exactly 2 bytes (the confirmation); whatever follows is put back for the caller. */
async function readConfirmation(stream: Duplex, session: SidechannelSession, opts: OpenSidechannelOptions) {
  const read = await readExactly(stream, 2, { timeoutMs: opts.timeoutMs, signal: opts.signal });
  if (!read.ok) throw SidechannelFailed(`${PREFIX}receive confirmation: ${readFailure(read, session)}`);
  return read.bytes;
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
