import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePkt, MAX_PKT_PAYLOAD, PktLineError, PktLineReader } from '../../lib/pktline.js';
import { bounded, cutsArb, expectTyped, FUZZ_RUNS, runs, settle, splitAt } from './budget.js';

const packetArb = fc.oneof(
  fc
    .uint8Array({ minLength: 1, maxLength: 300 })
    .map((p) => ({ kind: 'data', hex: Buffer.from(p).toString('hex') })),
  fc.constantFrom({ kind: 'flush' }, { kind: 'delim' }, { kind: 'response-end' }),
);
type P = { kind: string; hex?: string };

const encode = (ps: P[]) =>
  Buffer.concat(
    ps.map((p) =>
      p.kind === 'data'
        ? encodePkt(Buffer.from(p.hex as string, 'hex'))
        : Buffer.from(p.kind === 'flush' ? '0000' : p.kind === 'delim' ? '0001' : '0002'),
    ),
  );

function readAll(chunks: Buffer[]): { packets: P[]; rest: number } {
  const reader = new PktLineReader();
  const packets: P[] = [];
  for (const c of chunks) {
    for (const p of reader.push(c))
      packets.push(p.kind === 'data' ? { kind: 'data', hex: p.payload.toString('hex') } : { kind: p.kind });
  }
  return { packets, rest: reader.buffered.length };
}

describe(`pkt-line decoder fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('any split of valid packets reads back the same packets', () => {
    fc.assert(
      fc.property(fc.array(packetArb, { maxLength: 10 }), cutsArb, (ps, cuts) => {
        const got = bounded(() => readAll(splitAt(encode(ps), cuts)));
        expect(got).toEqual({ packets: ps, rest: 0 });
      }),
      runs(),
    );
  });

  it('arbitrary bytes, split anywhere: packets, a buffered rest, or a PktLineError; never more than the input', () => {
    const hexish = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      fc
        .array(fc.constantFrom(...'0123456789abcdefABCDEFxg \n\0'), { maxLength: 64 })
        .map((c) => Buffer.from(c.join(''))),
      fc
        .nat({ max: 0xffff })
        .map((n) => Buffer.from(`${n.toString(16).padStart(4, '0')}${'x'.repeat(n % 97)}`)),
    );
    fc.assert(
      fc.property(hexish, cutsArb, (bytes, cuts) => {
        const r = settle(() => readAll(splitAt(bytes, cuts)));
        if (!r.ok) return expectTyped(r.error, PktLineError);
        const { packets, rest } = r.value;
        const size = packets.reduce((n, p) => n + 4 + (p.hex ? p.hex.length / 2 : 0), 0);
        expect(size + rest).toBe(bytes.length);
        for (const p of packets) if (p.hex) expect(p.hex.length / 2).toBeLessThanOrEqual(MAX_PKT_PAYLOAD);
      }),
      runs(),
    );
  });
});
