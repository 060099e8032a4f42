import type { Readable } from 'node:stream';

export interface DrainOptions {
  /** Consume at most this many bytes per second (pause/resume); unlimited when absent. */
  rateBytesPerSecond?: number;
  /** Give up (destroy the stream, reject) after this long. */
  timeoutMs: number;
  onChunk(chunk: Buffer): void;
}

/**
 * Reads a stream to its end, optionally at a bounded rate: whenever the bytes read get ahead of
 * `rate × elapsed`, the stream is paused until the budget catches up. Rejects when the stream
 * errors, closes without ending, or the timeout passes.
 */
export function drain(stream: Readable, opts: DrainOptions): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  let bytes = 0;
  return new Promise((resolve, reject) => {
    let settled = false;
    let resumeTimer: NodeJS.Timeout | undefined;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(resumeTimer);
      if (err) {
        stream.destroy();
        reject(err);
      } else resolve({ bytes, ms: performance.now() - started });
    };
    const timeout = setTimeout(
      () => finish(new Error(`no end of stream after ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      try {
        opts.onChunk(chunk);
      } catch (err) {
        finish(err as Error);
        return;
      }
      const rate = opts.rateBytesPerSecond;
      if (rate === undefined) return;
      const aheadMs = (bytes / rate) * 1000 - (performance.now() - started);
      if (aheadMs > 5 && !stream.isPaused()) {
        stream.pause();
        resumeTimer = setTimeout(() => stream.resume(), aheadMs);
      }
    });
    stream.once('end', () => finish());
    stream.once('error', (err) => finish(err));
    stream.once('close', () => finish(new Error('stream closed before its end')));
  });
}
