import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { encodePkt, FLUSH_PKT } from '../../lib/pktline.js';
import { BODY_BUFFER_BYTES, passthrough, pumpInput, UploadPackFilter } from './input.js';

function feed(filter: UploadPackFilter, chunks: Buffer[]) {
  const out: Buffer[] = [];
  for (const chunk of chunks) {
    const r = filter.push(chunk);
    out.push(...r.out);
    if (r.done) return { body: Buffer.concat(out).toString(), done: true };
  }
  return { body: Buffer.concat([...out, ...filter.end()]).toString(), done: false };
}

const v2Fetch = Buffer.concat([
  encodePkt('command=fetch\n'),
  Buffer.from('0001'),
  encodePkt('want 1111111111111111111111111111111111111111\n'),
  encodePkt('done\n'),
  FLUSH_PKT,
]);

describe('UploadPackFilter', () => {
  it('ends the body after done with one synthesized flush (v2: the client flush is dropped)', () => {
    expect(feed(new UploadPackFilter(), [v2Fetch])).toEqual({
      body: `0012command=fetch\n00010032want 1111111111111111111111111111111111111111\n0009done\n0000`,
      done: true,
    });
  });

  it('finds done across chunk boundaries', () => {
    const bytes = [...v2Fetch].map((b) => Buffer.from([b]));
    expect(feed(new UploadPackFilter(), bytes).done).toBe(true);
  });

  it('adds the flush after a v0 done too', () => {
    const v0 = Buffer.concat([
      encodePkt('want 2222222222222222222222222222222222222222\n'),
      FLUSH_PKT,
      encodePkt('done\n'),
    ]);
    expect(feed(new UploadPackFilter(), [v0]).body.endsWith('0009done\n0000')).toBe(true);
  });

  it('forwards a request without done (ls-refs) until stdin ends', () => {
    const lsRefs = Buffer.concat([
      encodePkt('command=ls-refs\n'),
      Buffer.from('0001'),
      encodePkt('peel\n'),
      FLUSH_PKT,
    ]);
    expect(feed(new UploadPackFilter(), [lsRefs, FLUSH_PKT])).toEqual({
      body: `${lsRefs.toString()}0000`,
      done: false,
    });
  });

  it('does not take "done" inside another packet for the end', () => {
    const r = feed(new UploadPackFilter(), [encodePkt('have done\n'), encodePkt('doneness\n')]);
    expect(r.done).toBe(false);
  });

  it('passes bytes that are not pkt-lines through unchanged', () => {
    expect(feed(new UploadPackFilter(), [Buffer.from('zzzz garbage'), encodePkt('done\n')])).toEqual({
      body: `zzzz garbage${encodePkt('done\n').toString()}`,
      done: false,
    });
  });
});

/** A sink that accepts one chunk and then reports backpressure until `release()`. */
class SlowSink extends Writable {
  readonly received: Buffer[] = [];
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

describe('pumpInput', () => {
  it('pauses the source once the body holds BODY_BUFFER_BYTES and resumes on drain', async () => {
    const source = new PassThrough({ highWaterMark: 1 });
    const sink = new SlowSink();
    pumpInput(source, sink, passthrough);
    const piece = BODY_BUFFER_BYTES / 4;
    for (let i = 0; i < 5; i++) source.write(Buffer.alloc(piece, i));
    await new Promise((r) => setImmediate(r));
    expect(source.isPaused()).toBe(true);
    expect(sink.writableLength).toBe(BODY_BUFFER_BYTES);
    expect(sink.received).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      sink.release();
      await new Promise((r) => setImmediate(r));
    }
    expect(sink.received.map((c) => c[0])).toEqual([0, 1, 2, 3, 4]);
  });

  it('writes the initial bytes first and ends the body when stdin ends', async () => {
    const source = new PassThrough();
    const chunks: Buffer[] = [];
    const sink = new PassThrough();
    sink.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => sink.on('end', r));
    const pump = pumpInput(source, sink, passthrough, [Buffer.from('first-')]);
    source.end('rest');
    await ended;
    expect(Buffer.concat(chunks).toString()).toBe('first-rest');
    expect(pump.bodyEnded).toBe(true);
  });

  it('ends the body at done and drops what the client sends afterwards', async () => {
    const source = new PassThrough();
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((r) => sink.on('end', r));
    pumpInput(source, sink, new UploadPackFilter());
    source.write(v2Fetch);
    await ended;
    source.write(FLUSH_PKT);
    expect(Buffer.concat(chunks).toString().endsWith('0009done\n0000')).toBe(true);
    expect(source.isPaused()).toBe(false);
  });
});
