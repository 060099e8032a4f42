import { describe, expect, it } from 'vitest';
import { checkResponseFrame, FrameReader, ResponseFrame } from '../lib/framing.js';
import { OutputBatch } from './output-batch.js';
import { compatibleEncoder, framedEncoder } from './response-encoder.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('OutputBatch', () => {
  it('hands the output of one turn of the loop on together, in order, in one write', async () => {
    const writes: Buffer[][] = [];
    const batch = new OutputBatch(framedEncoder, (chunks) => writes.push(chunks));
    const a = Buffer.from('aa');
    batch.add('stdout', a);
    batch.add('stdout', Buffer.from('b'));
    batch.add('stderr', Buffer.from('warn'));
    batch.add('stdout', Buffer.from('c'));
    batch.add('stdout', Buffer.alloc(0));
    expect(writes).toEqual([]);
    await tick();
    expect(writes).toHaveLength(1);
    const [chunks = []] = writes;
    // Pieces are passed on, not copied.
    expect(chunks[1]).toBe(a);
    const frames = new FrameReader(checkResponseFrame).push(Buffer.concat(chunks));
    expect(frames.map((f) => [f.type, f.payload.toString()])).toEqual([
      [ResponseFrame.stdout, 'aa'],
      [ResponseFrame.stdout, 'b'],
      [ResponseFrame.stderr, 'warn'],
      [ResponseFrame.stdout, 'c'],
    ]);
    batch.add('stdout', Buffer.from('next'));
    await tick();
    expect(writes).toHaveLength(2);
    const next = new FrameReader(checkResponseFrame).push(Buffer.concat(writes[1] ?? []));
    expect(next.map((f) => f.payload.toString())).toEqual(['next']);
  });

  it('flush() writes what is pending at once; the scheduled flush then finds nothing', async () => {
    const writes: string[] = [];
    const batch = new OutputBatch(compatibleEncoder, (chunks) =>
      writes.push(Buffer.concat(chunks).toString()),
    );
    batch.add('stdout', Buffer.from('x'));
    batch.add('stderr', Buffer.from('y'));
    batch.flush();
    expect(writes).toEqual(['xy']);
    await tick();
    expect(writes).toEqual(['xy']);
  });

  it('clear() drops what is pending', async () => {
    const writes: Buffer[][] = [];
    const batch = new OutputBatch(compatibleEncoder, (chunks) => writes.push(chunks));
    batch.add('stdout', Buffer.from('x'));
    batch.clear();
    await tick();
    expect(writes).toEqual([]);
  });
});
