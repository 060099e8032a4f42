import type { Duplex } from 'node:stream';

/**
 * Reads exactly `n` bytes from a stream that has not been read yet, leaving anything after them in
 * the stream (unshifted). Undefined when the stream ends, fails or the time runs out first.
 */
export function readExactly(stream: Duplex, n: number, timeoutMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let have = 0;
    const timer = setTimeout(() => settle(undefined), timeoutMs);
    timer.unref();
    const settle = (value: Buffer | undefined) => {
      clearTimeout(timer);
      stream.off('readable', onReadable);
      stream.off('end', onGone);
      stream.off('close', onGone);
      stream.off('error', onGone);
      resolve(value);
    };
    const onGone = () => settle(undefined);
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
      settle(all.subarray(0, n));
    };
    stream.on('readable', onReadable);
    stream.once('end', onGone);
    stream.once('close', onGone);
    stream.once('error', onGone);
    onReadable();
  });
}
