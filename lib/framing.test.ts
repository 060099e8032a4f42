import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BodyFrame,
  BodyFrameDecoder,
  checkResponseFrame,
  encodeBodyData,
  encodeErrorFrame,
  encodeExitStatus,
  encodeFrame,
  FrameReader,
  FramingError,
  ResponseFrame,
} from './framing.js';

async function decodeBody(chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  const decoder = new BodyFrameDecoder();
  decoder.on('data', (c: Buffer) => out.push(c));
  await pipeline(Readable.from(chunks), decoder);
  return Buffer.concat(out);
}

describe('request body framing v1', () => {
  it('strips data frames and drops keepalives', async () => {
    const body = [
      ...encodeBodyData(Buffer.from('0009done\n')),
      encodeFrame(BodyFrame.keepalive),
      ...encodeBodyData(Buffer.from('0000')),
    ];
    expect((await decodeBody(body)).toString()).toBe('0009done\n0000');
  });

  it('splits large chunks into frames of at most 65536 bytes and restores them', async () => {
    const big = Buffer.alloc(200_000, 7);
    const frames = encodeBodyData(big);
    expect(frames.length).toBe(4);
    expect((await decodeBody(frames)).equals(big)).toBe(true);
  });

  it.each([
    ['an unknown type', encodeFrame(0x09, Buffer.from('x'))],
    ['an empty data frame', encodeFrame(BodyFrame.data)],
    ['a keepalive with payload', encodeFrame(BodyFrame.keepalive, Buffer.from('x'))],
    ['an oversized data frame header', Buffer.from([1, 0, 1, 0, 1])],
  ])('rejects %s', async (_name, frame) => {
    await expect(decodeBody([frame])).rejects.toBeInstanceOf(FramingError);
  });

  it('rejects a body that ends inside a frame', async () => {
    await expect(
      decodeBody([encodeFrame(BodyFrame.data, Buffer.from('abc')).subarray(0, 6)]),
    ).rejects.toThrow(/inside a frame/);
  });

  it('round-trips any byte sequence cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 5000 }),
        fc.integer({ min: 1, max: 70 }),
        async (data, cut) => {
          const wire = Buffer.concat(encodeBodyData(Buffer.from(data)));
          const chunks: Buffer[] = [];
          for (let i = 0; i < wire.length; i += cut) chunks.push(wire.subarray(i, i + cut));
          expect([...(await decodeBody(chunks))]).toEqual([...data]);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('response framing', () => {
  it('carries stdout, stderr, exit status and errors', () => {
    const reader = new FrameReader(checkResponseFrame);
    const wire = Buffer.concat([
      encodeFrame(ResponseFrame.stdout, Buffer.from('out')),
      encodeFrame(ResponseFrame.keepalive),
      encodeFrame(ResponseFrame.stderr, Buffer.from('err')),
      encodeErrorFrame('X', 'boom'),
      encodeExitStatus(128),
    ]);
    const frames = [...reader.push(wire.subarray(0, 7)), ...reader.push(wire.subarray(7))];
    expect(frames.map((f) => f.type)).toEqual([1, 4, 2, 5, 3]);
    expect(frames[4]?.payload.readInt32BE(0)).toBe(128);
    expect(JSON.parse(frames[3]?.payload.toString() ?? '')).toEqual({ code: 'X', message: 'boom' });
    expect(reader.truncated).toBe(false);
  });

  it('hands streamed types on in pieces and joins the others once, whatever the cuts', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 6 }),
        fc.integer({ min: 1, max: 700 }),
        (outs, cut) => {
          const wire = Buffer.concat([
            ...outs.map((o) => encodeFrame(ResponseFrame.stdout, Buffer.from(o))),
            encodeErrorFrame('E', 'x'.repeat(40)),
            encodeExitStatus(3),
          ]);
          const streamed = new FrameReader(checkResponseFrame, {
            streamed: (t) => t === ResponseFrame.stdout,
          });
          const whole = new FrameReader(checkResponseFrame);
          const a: Array<{ type: number; payload: Buffer }> = [];
          const b: typeof a = [];
          for (let i = 0; i < wire.length; i += cut) {
            const chunk = wire.subarray(i, i + cut);
            for (const f of streamed.push(chunk)) {
              // a streamed piece is a view of the pushed chunk, never a copy
              if (f.type === ResponseFrame.stdout && f.payload.length > 0)
                expect(f.payload.buffer).toBe(chunk.buffer);
              a.push(f);
            }
            b.push(...whole.push(chunk));
          }
          const stdout = (fs: typeof a) =>
            Buffer.concat(fs.filter((f) => f.type === ResponseFrame.stdout).map((f) => f.payload));
          expect(stdout(a).equals(Buffer.concat(outs))).toBe(true);
          expect(stdout(b).equals(Buffer.concat(outs))).toBe(true);
          expect(b.filter((f) => f.type === ResponseFrame.stdout)).toHaveLength(outs.length);
          for (const fs of [a, b]) {
            expect(fs.at(-1)?.payload.readInt32BE(0)).toBe(3);
            expect(JSON.parse(fs.at(-2)?.payload.toString() ?? '')).toEqual({
              code: 'E',
              message: 'x'.repeat(40),
            });
          }
          expect(streamed.truncated || whole.truncated).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('knows when the stream ends inside a header or a payload', () => {
    const frame = encodeFrame(ResponseFrame.stdout, Buffer.from('abc'));
    for (const end of [2, 6]) {
      const reader = new FrameReader(checkResponseFrame, { streamed: () => true });
      reader.push(frame.subarray(0, end));
      expect(reader.truncated).toBe(true);
    }
  });

  it('rejects an exit status of the wrong size', () => {
    const reader = new FrameReader(checkResponseFrame);
    expect(() => reader.push(encodeFrame(ResponseFrame.exitStatus, Buffer.from('x')))).toThrow(FramingError);
  });
});
