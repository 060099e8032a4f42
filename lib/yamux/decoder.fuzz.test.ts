import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitAt } from '../../test/fuzz/budget.js';
import { FrameDecoder } from './decoder.js';
import { YamuxError } from './errors.js';
import { encodeHeader, type FrameHeader, FrameType } from './frame.js';

interface Frame {
  header: Omit<FrameHeader, 'version'>;
  payload: Buffer;
}

/** What a decoder reported, normalised so that different chunkings of the same bytes compare equal. */
interface Decoded {
  header: FrameHeader;
  payload: string;
}

const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  fc
    .record({
      flags: fc.integer({ min: 0, max: 0xffff }),
      streamId: fc.integer({ min: 0, max: 0xffffffff }),
      payload: fc.uint8Array({ maxLength: 96 }),
    })
    .map(({ flags, streamId, payload }) => ({
      header: { type: FrameType.Data, flags, streamId, length: payload.length },
      payload: Buffer.from(payload),
    })),
  fc
    .record({
      type: fc.constantFrom(FrameType.WindowUpdate, FrameType.Ping, FrameType.GoAway),
      flags: fc.integer({ min: 0, max: 0xffff }),
      streamId: fc.integer({ min: 0, max: 0xffffffff }),
      length: fc.integer({ min: 0, max: 0xffffffff }),
    })
    .map((header) => ({ header, payload: Buffer.alloc(0) })),
);

function encode(frames: Frame[]): Buffer {
  return Buffer.concat(frames.flatMap((f) => [encodeHeader(f.header), f.payload]));
}

/** Decodes `chunks` and checks the callback protocol on the way (pieces non-empty, `last` exactly once). */
function decode(chunks: Buffer[], maxDataLength?: (id: number) => number): Decoded[] {
  const out: Decoded[] = [];
  let open: { id: number; want: number; got: Buffer[] } | undefined;
  const decoder = new FrameDecoder(
    {
      header(header) {
        if (open !== undefined) throw new Error('header() inside a payload');
        out.push({ header, payload: '' });
        if (header.type === FrameType.Data && header.length > 0) {
          open = { id: header.streamId, want: header.length, got: [] };
        }
      },
      data(id, chunk, last) {
        if (open === undefined || id !== open.id || chunk.length === 0) throw new Error('stray data()');
        open.got.push(chunk);
        const have = open.got.reduce((n, c) => n + c.length, 0);
        if (last !== (have === open.want) || have > open.want) throw new Error('bad last flag');
        if (last) {
          out[out.length - 1]!.payload = Buffer.concat(open.got).toString('hex');
          open = undefined;
        }
      },
    },
    maxDataLength === undefined ? {} : { maxDataLength },
  );
  for (const c of chunks) decoder.push(c);
  return out;
}

const reference = (frames: Frame[]): Decoded[] =>
  frames.map((f) => ({ header: { version: 0, ...f.header }, payload: f.payload.toString('hex') }));

const ALLOWED = new Set(['YAMUX_BAD_VERSION', 'YAMUX_BAD_TYPE', 'YAMUX_WINDOW_EXCEEDED']);

describe('FrameDecoder fuzz', () => {
  it('random chunkings of valid frame sequences decode to the frames (40 000 cases)', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 24 }),
        (frames, cuts) => {
          const bytes = encode(frames);
          expect(decode(splitAt(bytes, cuts))).toEqual(reference(frames));
        },
      ),
      { numRuns: 40_000 },
    );
  });

  it('a split at every byte boundary, and byte-at-a-time, give the same callbacks (6 000 cases)', () => {
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 4 }), (frames) => {
        const bytes = encode(frames);
        const want = reference(frames);
        for (let i = 0; i <= bytes.length; i += 1) {
          expect(decode([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(want);
        }
        const single = [...bytes].map((b) => Buffer.from([b]));
        expect(decode(single)).toEqual(want);
      }),
      { numRuns: 6_000 },
    );
  });

  it('random garbage only ever throws typed YamuxErrors (30 000 cases)', () => {
    fc.assert(
      fc.property(
        // Zero-heavy bytes, so that many headers pass the version and type checks and reach deeper states.
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 255 })), {
          maxLength: 160,
        }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.option(fc.nat({ max: 200 })),
        (garbage, cuts, limit) => checkGarbage(Buffer.from(garbage), cuts, limit),
      ),
      { numRuns: 30_000 },
    );
  });

  it('mutated valid streams only ever throw typed YamuxErrors (30 000 cases)', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.option(fc.nat({ max: 200 })),
        (frames, flips, cuts, limit) => {
          const bytes = Buffer.from(encode(frames));
          for (const [at, value] of flips) bytes[at % bytes.length] = value;
          checkGarbage(bytes, cuts, limit);
        },
      ),
      { numRuns: 30_000 },
    );
  });
});

function checkGarbage(bytes: Buffer, cuts: number[], limit: number | null): void {
  const chunks = splitAt(bytes, cuts);
  try {
    decode(chunks, limit === null ? undefined : () => limit);
  } catch (err) {
    if (!(err instanceof YamuxError) || !ALLOWED.has(err.code)) throw err;
  }
}
