import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAll, encodePkt, FLUSH_PKT, MAX_PKT_PAYLOAD, PktLineError, PktLineReader } from './pktline.js';

describe('pkt-line', () => {
  it('encodes with a 4-hex length that includes itself', () => {
    expect(encodePkt('done\n').toString()).toBe('0009done\n');
    expect(encodePkt('').toString()).toBe('0004');
    expect(() => encodePkt(Buffer.alloc(MAX_PKT_PAYLOAD + 1))).toThrow(PktLineError);
  });

  it('decodes data, flush, delim and response-end packets', () => {
    const buf = Buffer.concat([
      encodePkt('command=ls-refs\n'),
      Buffer.from('0001'),
      encodePkt('peel\n'),
      FLUSH_PKT,
      Buffer.from('0002'),
    ]);
    expect(decodeAll(buf)).toEqual([
      { kind: 'data', payload: Buffer.from('command=ls-refs\n') },
      { kind: 'delim' },
      { kind: 'data', payload: Buffer.from('peel\n') },
      { kind: 'flush' },
      { kind: 'response-end' },
    ]);
  });

  it('rejects bad lengths', () => {
    expect(() => decodeAll(Buffer.from('zzzz'))).toThrow(PktLineError);
    expect(() => decodeAll(Buffer.from('0003'))).toThrow(PktLineError);
    expect(() => decodeAll(Buffer.from('0009don'))).toThrow(/truncated/);
  });

  it('reassembles packets split at any byte boundary', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 10 }),
        (payloads, cuts) => {
          const wire = Buffer.concat([...payloads.map((p) => encodePkt(Buffer.from(p))), FLUSH_PKT]);
          const reader = new PktLineReader();
          const out: Buffer[] = [];
          let flushes = 0;
          let offset = 0;
          let i = 0;
          while (offset < wire.length) {
            const n = cuts[i++ % cuts.length] as number;
            for (const p of reader.push(wire.subarray(offset, offset + n))) {
              if (p.kind === 'data') out.push(Buffer.from(p.payload));
              if (p.kind === 'flush') flushes++;
            }
            offset += n;
          }
          expect(out.map((b) => [...b])).toEqual(payloads.map((p) => [...p]));
          expect(flushes).toBe(1);
          expect(reader.buffered.length).toBe(0);
        },
      ),
    );
  });
});
