import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SidebandReader, SidechannelError, StdinDeframer } from '../../lib/sidechannel.js';
import { FrameDecoder } from '../../lib/yamux/decoder.js';
import { YamuxError } from '../../lib/yamux/errors.js';
import { cutsArb, expectTyped, FUZZ_RUNS, runs, settle, splitAt } from './budget.js';

const YAMUX_CODES = new Set([
  'YAMUX_BAD_VERSION',
  'YAMUX_BAD_TYPE',
  'YAMUX_WINDOW_EXCEEDED',
  'YAMUX_PROTOCOL',
]);
const SIDECHANNEL_CODES = new Set([
  'SIDECHANNEL_INVALID_HEADER',
  'SIDECHANNEL_UNEXPECTED_EOF',
  'SIDECHANNEL_INVALID_SIDEBAND',
  'SIDECHANNEL_UNEXPECTED_BAND',
]);

/** Byte soup that looks like the protocol often enough to reach its deeper states. */
const yamuxBytesArb = fc.oneof(
  fc.uint8Array({ maxLength: 160 }).map((b) => Buffer.from(b)),
  fc
    .array(
      fc.record({
        version: fc.oneof(fc.constant(0), fc.nat({ max: 255 })),
        type: fc.nat({ max: 5 }),
        flags: fc.nat({ max: 0xffff }),
        id: fc.nat(),
        length: fc.oneof(fc.nat({ max: 64 }), fc.nat()),
        body: fc.uint8Array({ maxLength: 64 }),
      }),
      { maxLength: 6 },
    )
    .map((frames) =>
      Buffer.concat(
        frames.flatMap((f) => {
          const h = Buffer.alloc(12);
          h.writeUInt8(f.version, 0);
          h.writeUInt8(f.type, 1);
          h.writeUInt16BE(f.flags, 2);
          h.writeUInt32BE(f.id >>> 0, 4);
          h.writeUInt32BE(f.length >>> 0, 8);
          return [h, Buffer.from(f.body)];
        }),
      ),
    ),
);

describe(`yamux frame decoder fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('any bytes, split anywhere: headers and data within their lengths, or a YamuxError with a known code', () => {
    fc.assert(
      fc.property(yamuxBytesArb, cutsArb, fc.nat({ max: 128 }), (bytes, cuts, maxData) => {
        let open = 0;
        const decoder = new FrameDecoder(
          {
            header: (h) => {
              expect(open).toBe(0);
              if (h.type === 0) open = h.length;
            },
            data: (_id, chunk, last) => {
              open -= chunk.length;
              expect(open >= 0 && last === (open === 0)).toBe(true);
            },
          },
          { maxDataLength: () => maxData },
        );
        const r = settle(() => {
          for (const c of splitAt(bytes, cuts)) decoder.push(c);
        });
        if (!r.ok) expectTyped(r.error, YamuxError, YAMUX_CODES);
      }),
      runs(),
    );
  });
});

const pktSoupArb = fc.oneof(
  fc.uint8Array({ maxLength: 160 }).map((b) => Buffer.from(b)),
  fc
    .array(
      fc.oneof(
        fc
          .record({ band: fc.nat({ max: 4 }), data: fc.uint8Array({ maxLength: 40 }) })
          .map(({ band, data }) => {
            const payload = Buffer.concat([Buffer.from([band]), Buffer.from(data)]);
            return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0')), payload]);
          }),
        fc.constantFrom('0000', '0001', '0002', '0003', '0004', 'ffff', 'zzzz').map((s) => Buffer.from(s)),
      ),
      { maxLength: 8 },
    )
    .map((parts) => Buffer.concat(parts)),
);

describe(`sidechannel packets fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('the stdin deframer yields stdin bytes until the flush, or a SidechannelError with a known code', () => {
    fc.assert(
      fc.property(pktSoupArb, cutsArb, fc.boolean(), (bytes, cuts, end) => {
        const d = new StdinDeframer();
        const r = settle(() => {
          let total = 0;
          for (const c of splitAt(bytes, cuts)) total += d.push(c).data.reduce((n, b) => n + b.length, 0);
          if (end) d.end();
          return total;
        });
        if (!r.ok) return expectTyped(r.error, SidechannelError, SIDECHANNEL_CODES);
        expect(r.value).toBeLessThanOrEqual(bytes.length);
      }),
      runs(),
    );
  });

  it('the sideband reader yields bands 1 and 2 only, or a SidechannelError with a known code', () => {
    fc.assert(
      fc.property(pktSoupArb, cutsArb, fc.boolean(), (bytes, cuts, end) => {
        const bands: number[] = [];
        const reader = new SidebandReader((band) => bands.push(band));
        const r = settle(() => {
          for (const c of splitAt(bytes, cuts)) reader.push(c);
          if (end) reader.end();
        });
        if (!r.ok) return expectTyped(r.error, SidechannelError, SIDECHANNEL_CODES);
        for (const b of bands) expect([1, 2]).toContain(b);
      }),
      runs(),
    );
  });
});
