import type { Duplex } from 'node:stream';
import { ioDeadline } from './io-deadline.js';

/** Why `readExactly` came back short. */
export type ShortReadReason = 'end' | 'error' | 'close' | 'timeout' | 'aborted';

export type ReadExactlyResult =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: ShortReadReason; received: number; err?: Error };

export interface ReadExactlyOptions {
  timeoutMs: number;
  /** Gives up (reason `aborted`) when this fires first. */
  signal?: AbortSignal;
}

/**
 * Reads exactly `n` bytes from a stream nobody reads yet, leaving anything after them in the stream
 * (unshifted) and the stream paused. A short read says why: the stream ended, failed, closed, the
 * time ran out or the signal fired; `received` counts the bytes seen before that.
 * The time runs out only for bytes that had not arrived (`io-deadline.ts`).
 */
export function readExactly(stream: Duplex, n: number, opts: ReadExactlyOptions): Promise<ReadExactlyResult> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let have = 0;
    const settle = (result: ReadExactlyResult) => {
      cancelDeadline();
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('close', onClose);
      stream.off('error', onError);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const short = (reason: ShortReadReason, err?: Error) =>
      settle({ ok: false, reason, received: have, err });
    const onEnd = () => short('end');
    const onClose = () => short('close');
    const onError = (err: Error) => short('error', err);
    const onAbort = () => short('aborted');
    const onReadable = () => {
      while (have < n) {
        const chunk = stream.read() as Buffer | null;
        if (chunk === null) break;
        parts.push(chunk);
        have += chunk.length;
      }
      if (have < n) return;
      const all = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      if (all.length > n) stream.unshift(all.subarray(n));
      settle({ ok: true, bytes: all.subarray(0, n) });
    };
    const cancelDeadline = ioDeadline(opts.timeoutMs, () => short('timeout'));
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('close', onClose);
    stream.once('error', onError);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    else onReadable();
  });
}
