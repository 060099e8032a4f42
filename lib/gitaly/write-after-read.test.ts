import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { relayThrough, SPOOL_MEMORY_BYTES, WriteAfterRead } from './write-after-read.js';

/** Unit test of the coupling alone: a source stream, a slow sink, a spool folder. */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sink(): Writable & { received: Buffer[] } {
  const received: Buffer[] = [];
  const w = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _e, done) {
      received.push(chunk);
      setImmediate(done);
    },
  });
  return Object.assign(w, { received });
}

describe('WriteAfterRead', () => {
  it('takes a source far larger than its memory spool without stalling it, sends nothing before release, then all in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'war-'));
    dirs.push(dir);
    const out = sink();
    const coupled = new WriteAfterRead(out, new AbortController().signal, dir);
    const source = new PassThrough({ highWaterMark: 16 * 1024 });
    let counted = 0;
    const relayed = relayThrough(source, coupled, (n) => {
      counted += n;
    });
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(16 * 1024, i));
    // Every write is consumed although the output is held: the source never waits for release.
    for (const c of chunks) {
      if (!source.write(c)) await new Promise((r) => source.once('drain', r));
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(counted).toBe(64 * 16 * 1024);
    expect(out.received).toEqual([]);
    expect(coupled.spooledBytes).toBeGreaterThan(SPOOL_MEMORY_BYTES);
    // The spool file is unlinked as soon as it is made.
    expect(readdirSync(dir)).toEqual([]);
    await coupled.release();
    source.end(Buffer.from('after'));
    await relayed;
    await coupled.release();
    // Buffer#equals: a deep toEqual of a MiB is slow.
    expect(Buffer.concat(out.received).equals(Buffer.concat([...chunks, Buffer.from('after')]))).toBe(true);
  });

  it('a discarded spool sends nothing', async () => {
    const out = sink();
    const coupled = new WriteAfterRead(out, new AbortController().signal);
    await coupled.write(Buffer.alloc(SPOOL_MEMORY_BYTES * 2));
    await coupled.discard();
    expect(out.received).toEqual([]);
  });
});
