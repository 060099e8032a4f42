/**
 * @file Stream helpers for every place that moves bytes by hand: a bounded body read, a drain wait
 * that never leaks or hangs, and a pipe through a filter that may end the sink early. Each one's
 * listeners are gone once it is done (fastify's `sendStream` and undici's `writeIterable` habit).
 */
import { once } from 'node:events';
import { finished, type Readable, type Writable } from 'node:stream';

/** A bounded body: the first `limit` bytes at most, and whether more came. */
export interface LimitedBody {
  body: Buffer;
  /** True when the stream had more than `limit` bytes: the rest was not read and the stream destroyed. */
  truncated: boolean;
}

/**
 * Reads `stream` into memory up to `limit` bytes. Beyond that the read stops, the stream is destroyed
 * (so a pooled connection or HTTP/2 stream is not left half-read) and `truncated` is set. Rejects
 * when the stream fails or closes before its end (`ERR_STREAM_PREMATURE_CLOSE`).
 */
export async function readBodyLimited(stream: Readable, limit: number): Promise<LimitedBody> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (size + buf.length > limit) {
      parts.push(buf.subarray(0, limit - size));
      // Leaving the loop destroys the stream.
      return { body: Buffer.concat(parts), truncated: true };
    }
    parts.push(buf);
    size += buf.length;
  }
  return { body: Buffer.concat(parts), truncated: false };
}

/** `waitDrain` gave up because the stream finished or closed before it drained. */
export class StreamClosedError extends Error {
  readonly code = 'ERR_STREAM_CLOSED_BEFORE_DRAIN';
  constructor(cause?: unknown) {
    super('stream closed before it drained', cause === undefined ? undefined : { cause });
    this.name = 'StreamClosedError';
  }
}

/**
 * Resolves when `stream` has drained (at once when it does not need to). Rejects when the stream
 * is or gets destroyed, errors or finishes first (`StreamClosedError`, with the stream's error as `cause`), or
 * when `signal` aborts (with its reason). Either way every listener it added is removed.
 */
export async function waitDrain(stream: Writable, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  if (stream.destroyed || stream.writableFinished) throw new StreamClosedError();
  if (!stream.writableNeedDrain) return;
  const gaveUp = new AbortController();
  const onAbort = () => gaveUp.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const stopWatching = finished(stream, { readable: false }, (err) =>
    gaveUp.abort(new StreamClosedError(err)),
  );
  try {
    await once(stream, 'drain', { signal: gaveUp.signal });
  } catch (err) {
    throw gaveUp.signal.aborted ? gaveUp.signal.reason : err;
  } finally {
    stopWatching();
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Decides, chunk by chunk, what a `pipeFiltered` forwards and whether the sink is complete. */
export interface ChunkFilter {
  /** Bytes to forward for this chunk, and whether the sink is complete after them. */
  push(chunk: Buffer): { out: Buffer[]; done: boolean };
  /** Bytes still held when the source ends. */
  end(): Buffer[];
}

export interface FilteredPipe {
  /** Stops forwarding and pauses the source; the sink is left as it is. */
  stop(): void;
  /** True once the sink was ended, because the filter said so or the source ended. */
  readonly sinkEnded: boolean;
}

const ignore = () => undefined;

/**
 * `initial`, then `source`, through `filter` into `sink`, with backpressure (the source is paused
 * while the sink is full, until `waitDrain`). When the filter says done, or the source ends, the
 * sink is ended; whatever the source still sends is read and dropped (so its sender never stalls).
 */
export function pipeFiltered(
  source: Readable,
  sink: Writable,
  filter: ChunkFilter,
  initial: Buffer[] = [],
): FilteredPipe {
  let sinkEnded = false;
  const stopped = new AbortController();
  const write = (bufs: Buffer[]): boolean => {
    let ok = true;
    for (const b of bufs) if (b.length > 0) ok = sink.write(b) && ok;
    return ok;
  };
  const waitForSink = () => {
    source.pause();
    waitDrain(sink, stopped.signal).then(() => {
      if (!stopped.signal.aborted) source.resume();
    }, ignore);
  };
  const detach = () => {
    source.off('data', onData);
    source.off('end', onEnd);
    stopped.abort();
  };
  const endSink = (rest: Buffer[]) => {
    write(rest);
    sinkEnded = true;
    sink.end();
    detach();
    source.on('data', ignore);
    source.resume();
  };
  const onData = (chunk: Buffer) => {
    const { out, done } = filter.push(chunk);
    if (done) endSink(out);
    else if (!write(out)) waitForSink();
  };
  const onEnd = () => endSink(filter.end());

  const first = filter.push(Buffer.concat(initial));
  if (first.done) endSink(first.out);
  else if (source.readableEnded) endSink([...first.out, ...filter.end()]);
  else {
    source.on('data', onData);
    source.once('end', onEnd);
    if (write(first.out)) source.resume();
    else waitForSink();
  }
  return {
    stop() {
      detach();
      source.off('data', ignore);
      source.pause();
    },
    get sinkEnded() {
      return sinkEnded;
    },
  };
}
