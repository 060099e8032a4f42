import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChunkFilter,
  followReadable,
  pipeFiltered,
  readBodyLimited,
  StreamClosedError,
  waitDrain,
} from './streams.js';

/** A writable that holds every write until `release()`; full after one byte. */
class HeldSink extends Writable {
  received: Buffer[] = [];
  private pending: (() => void) | undefined;
  constructor() {
    super({ highWaterMark: 1 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.received.push(chunk);
    this.pending = cb;
  }
  release(): void {
    const cb = this.pending;
    this.pending = undefined;
    cb?.();
  }
}

const EVENTS = ['drain', 'error', 'close', 'finish', 'end', 'prefinish'] as const;
const listeners = (s: Writable) => Object.fromEntries(EVENTS.map((e) => [e, s.listenerCount(e)]));
const tick = () => new Promise((r) => setImmediate(r));

/** A sink that needs a drain: one write held. */
function fullSink(): HeldSink {
  const sink = new HeldSink();
  expect(sink.write('x')).toBe(false);
  return sink;
}

describe('readBodyLimited', () => {
  it('reads a body up to its end', async () => {
    expect(await readBodyLimited(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4)).toEqual({
      body: Buffer.from('abcd'),
      truncated: false,
    });
  });

  it('keeps the first `limit` bytes of a longer body and destroys the stream', async () => {
    const stream = new PassThrough();
    stream.write('abc');
    stream.write('def');
    const read = await readBodyLimited(stream, 4);
    expect(read).toEqual({ body: Buffer.from('abcd'), truncated: true });
    expect(stream.destroyed).toBe(true);
  });

  it('rejects a body that fails or closes before its end', async () => {
    const failing = new PassThrough();
    const p = readBodyLimited(failing, 10);
    failing.destroy(new Error('reset'));
    await expect(p).rejects.toThrow('reset');
    const closed = new PassThrough();
    const q = readBodyLimited(closed, 10);
    closed.write('a');
    closed.destroy();
    await expect(q).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});

describe('waitDrain', () => {
  it('resolves at once when the stream does not need a drain', async () => {
    const sink = new PassThrough();
    await waitDrain(sink);
    expect(listeners(sink)).toEqual(listeners(new PassThrough()));
  });

  it('resolves on drain and removes its listeners', async () => {
    const sink = fullSink();
    const before = listeners(sink);
    const p = waitDrain(sink);
    expect(sink.listenerCount('drain')).toBe(1);
    sink.release();
    await p;
    expect(listeners(sink)).toEqual(before);
  });

  it('rejects with the reason when the signal aborts, and removes its listeners', async () => {
    const sink = fullSink();
    const before = listeners(sink);
    const ac = new AbortController();
    const p = waitDrain(sink, ac.signal);
    ac.abort(new Error('client gone'));
    await expect(p).rejects.toThrow('client gone');
    expect(listeners(sink)).toEqual(before);
  });

  it('rejects at once for an aborted signal', async () => {
    const sink = fullSink();
    await expect(waitDrain(sink, AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(sink.listenerCount('drain')).toBe(0);
  });

  it('rejects when the stream closes or fails before draining, and removes its listeners', async () => {
    const closed = fullSink();
    const p = waitDrain(closed);
    closed.destroy();
    await expect(p).rejects.toBeInstanceOf(StreamClosedError);
    await tick();
    expect(closed.listenerCount('drain')).toBe(0);
    expect(closed.listenerCount('close')).toBe(0);

    const failed = fullSink();
    failed.on('error', () => undefined);
    const q = waitDrain(failed);
    failed.destroy(new Error('EPIPE'));
    await expect(q).rejects.toMatchObject({ name: 'StreamClosedError', cause: { message: 'EPIPE' } });
    await tick();
    expect(failed.listenerCount('drain')).toBe(0);
    expect(failed.listenerCount('error')).toBe(1);
  });

  it('rejects for a stream that is already destroyed', async () => {
    const sink = fullSink();
    sink.destroy();
    await expect(waitDrain(sink)).rejects.toBeInstanceOf(StreamClosedError);
  });

  it('leaves no listener behind over many waits (no MaxListenersExceeded)', async () => {
    const sink = new HeldSink();
    const before = listeners(sink);
    for (let i = 0; i < 50; i++) {
      sink.write('x');
      const p = waitDrain(sink);
      sink.release();
      await p;
    }
    expect(listeners(sink)).toEqual(before);
  });
});

const passthrough: ChunkFilter = { push: (chunk) => ({ out: [chunk], done: false }), end: () => [] };

describe('pipeFiltered', () => {
  it('pauses the source while the sink is full and resumes on drain', async () => {
    const source = new PassThrough();
    const sink = new HeldSink();
    pipeFiltered(source, sink, passthrough);
    source.write('one');
    source.write('two');
    await tick();
    expect(source.isPaused()).toBe(true);
    expect(Buffer.concat(sink.received).toString()).toBe('one');
    sink.release();
    await tick();
    expect(Buffer.concat(sink.received).toString()).toBe('onetwo');
  });

  it('with sinkBufferBytes writes on past the high-water mark and pauses only at that many bytes', async () => {
    const source = new PassThrough();
    const sink = new HeldSink();
    pipeFiltered(source, sink, passthrough, [], 8);
    for (const piece of ['one', 'two', 'six']) source.write(piece);
    await tick();
    expect(source.isPaused()).toBe(true);
    expect(sink.writableLength).toBe(9);
    source.write('ten');
    sink.release();
    await tick();
    // 'one' went to _write; 'two' and 'six' were buffered behind it, 'ten' waited in the source.
    expect(Buffer.concat(sink.received).toString()).toBe('onetwo');
    sink.release();
    await tick();
    sink.release();
    await tick();
    expect(Buffer.concat(sink.received).toString()).toBe('onetwosixten');
  });

  it('ends the sink when the filter is done, drops the rest and leaves no drain waiter', async () => {
    const source = new PassThrough();
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => sink.on('end', r));
    const untilStop: ChunkFilter = {
      push: (chunk) => {
        const at = chunk.indexOf('STOP');
        return at < 0 ? { out: [chunk], done: false } : { out: [chunk.subarray(0, at)], done: true };
      },
      end: () => [Buffer.from('never')],
    };
    const pipe = pipeFiltered(source, sink, untilStop, [Buffer.from('a-')]);
    source.write('b-STOP-c');
    await ended;
    source.write('ignored');
    await tick();
    expect(Buffer.concat(chunks).toString()).toBe('a-b-');
    expect(pipe.sinkEnded).toBe(true);
    expect(source.isPaused()).toBe(false);
    expect(sink.listenerCount('drain')).toBe(0);
  });

  it('stop() while waiting for a drain removes the waiter and keeps the source paused', async () => {
    const source = new PassThrough();
    const sink = new HeldSink();
    const pipe = pipeFiltered(source, sink, passthrough);
    source.write('one');
    await tick();
    expect(sink.listenerCount('drain')).toBe(1);
    pipe.stop();
    await tick();
    expect(sink.listenerCount('drain')).toBe(0);
    expect(sink.listenerCount('close')).toBe(0);
    sink.release();
    await tick();
    expect(source.isPaused()).toBe(true);
    expect(source.listenerCount('data')).toBe(0);
  });

  it('a sink closed while full leaves no listener on it', async () => {
    const source = new PassThrough();
    const sink = new HeldSink();
    pipeFiltered(source, sink, passthrough);
    source.write('one');
    await tick();
    sink.destroy();
    await tick();
    expect(listeners(sink)).toMatchObject({ drain: 0, finish: 0, close: 0 });
  });
});

describe('followReadable', () => {
  it('removes its listeners at the end, leaving one that swallows a late error', async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    const done = new Promise<Error | undefined>((resolve) => {
      followReadable(stream, (c) => chunks.push(c.toString()), resolve);
    });
    stream.end('abc');
    expect(await done).toBeUndefined();
    expect(chunks).toEqual(['abc']);
    for (const e of ['data', 'end', 'close']) expect(stream.listenerCount(e)).toBe(0);
    expect(stream.listenerCount('error')).toBe(1);
    expect(() => stream.emit('error', new Error('late'))).not.toThrow();
  });
});

describe('HTTP/2: a response the server resets after answering in full', () => {
  let server: http2.Http2Server;
  let session: http2.ClientHttp2Session;

  beforeAll(async () => {
    server = http2.createServer();
    // As the bridge does: the whole answer, then RST_STREAM(NO_ERROR) while the request is still open.
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end(Buffer.alloc(8 * 1024, 7), () => stream.close(http2.constants.NGHTTP2_NO_ERROR));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    session?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('is read to its end, although the stream emits aborted first (stream.finished calls that premature)', async () => {
    const req = session.request({ ':method': 'POST', ':path': '/' }, { endStream: false });
    req.on('error', () => undefined);
    const aborted = new Promise((resolve) => req.once('aborted', resolve));
    await new Promise((resolve) => req.once('response', resolve));
    await aborted;
    const read = await readBodyLimited(req, 1 << 20);
    expect(read.truncated).toBe(false);
    expect(read.body.length).toBe(8 * 1024);
  });
});
