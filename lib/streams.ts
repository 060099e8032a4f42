/**
 * @file Stream helpers for every place that moves bytes by hand: following a readable to its end, a
 * bounded body read, a drain wait that never leaks or hangs, and a pipe through a filter that may end
 * the sink early. Each one's listeners are gone once it is done (fastify's `sendStream` and undici's
 * `writeIterable` habit), but for one no-op `error` listener that keeps a late error from crashing.
 */
import { once } from 'node:events';
import { finished, type Readable, type Writable } from 'node:stream';

const ignore = () => undefined;
const swallowError = (_err: Error) => undefined;

/** A bounded body: the first `limit` bytes at most, and whether more came. */
export interface LimitedBody {
  body: Buffer;
  /** True when the stream had more than `limit` bytes: the rest was not read and the stream destroyed. */
  truncated: boolean;
}

/** A readable closed before its `end`: destroyed, or its connection went away. */
export class PrematureCloseError extends Error {
  readonly code = 'ERR_STREAM_PREMATURE_CLOSE';
  constructor(message = 'stream closed before its end') {
    super(message);
    this.name = 'PrematureCloseError';
  }
}

/**
 * Follows `stream` to its end: `onData` for every chunk (the stream flows), then `done()` on `end`,
 * `done(err)` on `error` or on a `close` before `end` (a `PrematureCloseError` with `closedMessage`).
 * `done` is called once at most; the returned `stop()` (also run before `done`) removes every listener.
 *
 * The end is the `end` event, not `stream.finished`: an HTTP/2 stream that the server resets after
 * answering in full (`NO_ERROR` while our request body is still open, as the bridge does) emits
 * `aborted` before its buffered data and `end`, which `finished` reports as a premature close.
 */
export function followReadable(
  stream: Readable,
  onData: (chunk: Buffer) => void,
  done: (err?: Error) => void,
  closedMessage?: string,
): () => void {
  let over = false;
  const data = (chunk: Buffer | string) => onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const end = () => finish();
  const error = (err: Error) => finish(err);
  const close = () => finish(new PrematureCloseError(closedMessage));
  const stop = () => {
    over = true;
    stream.off('data', data);
    stream.off('end', end);
    stream.off('close', close);
    // A late error has nobody left to go to; as stream.finished does, one listener stays to swallow it.
    stream.off('error', error);
    if (!stream.listeners('error').includes(swallowError)) stream.on('error', swallowError);
  };
  function finish(err?: Error) {
    if (over) return;
    stop();
    done(err);
  }
  stream.on('data', data);
  stream.once('end', end);
  stream.once('error', error);
  stream.once('close', close);
  return stop;
}

/**
 * Reads `stream` into memory up to `limit` bytes. Beyond that the read stops, the stream is destroyed
 * (so a pooled connection or HTTP/2 stream is not left half-read) and `truncated` is set. Rejects
 * when the stream fails or closes before its end (`PrematureCloseError`).
 */
export function readBodyLimited(stream: Readable, limit: number): Promise<LimitedBody> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const stop = followReadable(
      stream,
      (chunk) => {
        if (size + chunk.length <= limit) {
          parts.push(chunk);
          size += chunk.length;
          return;
        }
        parts.push(chunk.subarray(0, limit - size));
        stop();
        stream.destroy();
        resolve({ body: Buffer.concat(parts), truncated: true });
      },
      (err) => (err ? reject(err) : resolve({ body: Buffer.concat(parts), truncated: false })),
    );
  });
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

/**
 * `initial`, then `source`, through `filter` into `sink`, with backpressure (the source is paused
 * while the sink is full, until `waitDrain`). When the filter says done, or the source ends, the
 * sink is ended; whatever the source still sends is read and dropped (so its sender never stalls).
 *
 * `sinkBufferBytes` (0: the sink's own high-water mark) lets the sink hold that much before the
 * source is paused, however small its high-water mark: an HTTP/2 request stream's is 16 KiB, so with
 * it each 32 KiB SSH packet was written alone, as two DATA frames in a `writev` of its own, and
 * waited for its drain; written on while the previous write is still out, chunks leave as one
 * `_writev`, many frames per system call.
 */
export function pipeFiltered(
  source: Readable,
  sink: Writable,
  filter: ChunkFilter,
  initial: Buffer[] = [],
  sinkBufferBytes = 0,
): FilteredPipe {
  let sinkEnded = false;
  const stopped = new AbortController();
  const write = (bufs: Buffer[]): boolean => {
    let ok = true;
    for (const b of bufs) if (b.length > 0) ok = sink.write(b) && ok;
    return ok || (sinkBufferBytes > 0 && sink.writableLength < sinkBufferBytes);
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
