import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BodyFrame,
  BodyFrameDecoder,
  checkBodyFrame,
  checkResponseFrame,
  encodeBodyData,
  encodeFrame,
  FrameReader,
  FramingError,
  MAX_BODY_FRAME_PAYLOAD,
  ResponseFrame,
} from '../../lib/framing.js';
import { cutsArb, expectTyped, FUZZ_RUNS, runs, settle, splitAt } from './budget.js';

const responseFrameArb = fc.oneof(
  fc
    .record({
      type: fc.constantFrom(ResponseFrame.stdout, ResponseFrame.stderr, ResponseFrame.error),
      payload: fc.uint8Array({ maxLength: 200 }),
    })
    .map(({ type, payload }) => ({ type, payload: Buffer.from(payload) })),
  fc.integer().map((code) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(code | 0);
    return { type: ResponseFrame.exitStatus, payload: b };
  }),
  fc.constant({ type: ResponseFrame.keepalive, payload: Buffer.alloc(0) }),
);

function readFrames(check: typeof checkResponseFrame, chunks: Buffer[]) {
  const reader = new FrameReader(check);
  const frames = chunks.flatMap((c) => reader.push(c));
  return {
    frames: frames.map((f) => ({ type: f.type, payload: Buffer.from(f.payload) })),
    truncated: reader.truncated,
  };
}

/** A body through the bridge's Transform, chunk by chunk as the HTTP stream delivers it. */
async function unframeBody(chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  const decoder = Readable.from(chunks, { objectMode: false }).pipe(new BodyFrameDecoder());
  for await (const c of decoder) out.push(c as Buffer);
  return Buffer.concat(out);
}

describe(`tunnel response framing fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('any split of valid response frames reads back the same frames', () => {
    fc.assert(
      fc.property(fc.array(responseFrameArb, { maxLength: 10 }), cutsArb, (frames, cuts) => {
        const bytes = Buffer.concat(frames.map((f) => encodeFrame(f.type, f.payload)));
        const r = settle(() => readFrames(checkResponseFrame, splitAt(bytes, cuts)));
        expect(r.ok && r.value).toEqual({ frames, truncated: false });
      }),
      runs(),
    );
  });

  it('arbitrary bytes: frames within the limits, a truncated rest, or a FramingError', () => {
    const arb = fc.oneof(
      fc.uint8Array({ maxLength: 120 }).map((b) => Buffer.from(b)),
      fc
        .record({
          type: fc.nat({ max: 8 }),
          len: fc.oneof(fc.nat({ max: 16 }), fc.nat()),
          tail: fc.uint8Array({ maxLength: 40 }),
        })
        .map(({ type, len, tail }) => {
          const h = Buffer.alloc(5);
          h.writeUInt8(type);
          h.writeUInt32BE(len >>> 0, 1);
          return Buffer.concat([h, Buffer.from(tail)]);
        }),
    );
    fc.assert(
      fc.property(arb, cutsArb, (bytes, cuts) => {
        const r = settle(() => readFrames(checkResponseFrame, splitAt(bytes, cuts)));
        if (!r.ok) return expectTyped(r.error, FramingError);
        for (const f of r.value.frames) expect(checkResponseFrame(f.type, f.payload.length)).toBeUndefined();
      }),
      runs(),
    );
  });
});

describe(`request body framing fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('git bytes framed with keepalives, split anywhere, come out unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.constant(null)), {
          maxLength: 8,
        }),
        cutsArb,
        async (parts, cuts) => {
          const frames = parts.flatMap((p) =>
            p === null ? [encodeFrame(BodyFrame.keepalive)] : encodeBodyData(Buffer.from(p)),
          );
          const expected = Buffer.concat(
            parts.filter((p) => p !== null).map((p) => Buffer.from(p as Uint8Array)),
          );
          expect((await unframeBody(splitAt(Buffer.concat(frames), cuts))).equals(expected)).toBe(true);
        },
      ),
      runs(),
    );
  });

  it('arbitrary bodies: git bytes of valid data frames, or a FramingError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 150 }), cutsArb, (bytes, cuts) => {
        const r = settle(() => readFrames(checkBodyFrame, splitAt(Buffer.from(bytes), cuts)));
        if (!r.ok) return expectTyped(r.error, FramingError);
        for (const f of r.value.frames) {
          if (f.type === BodyFrame.data) expect(f.payload.length).toBeLessThanOrEqual(MAX_BODY_FRAME_PAYLOAD);
          else expect(f).toEqual({ type: BodyFrame.keepalive, payload: Buffer.alloc(0) });
        }
      }),
      runs(),
    );
  });
});
