import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Band,
  decodeSidechannelId,
  encodeSideband,
  encodeSidechannelId,
  encodeStdin,
  MAX_SIDEBAND_DATA,
  MAX_STDIN_PAYLOAD,
  SidebandReader,
  SidechannelError,
  StdinDeframer,
} from './sidechannel.js';

const text = (parts: Buffer[]) => Buffer.concat(parts).toString('latin1');

function deframe(input: Buffer, splits: number[] = []): { stdin: Buffer; ended: boolean } {
  const d = new StdinDeframer();
  const out: Buffer[] = [];
  let last = 0;
  let ended = false;
  for (const at of [...splits, input.length]) {
    const r = d.push(input.subarray(last, at));
    out.push(...r.data);
    ended = r.ended;
    last = at;
  }
  return { stdin: Buffer.concat(out), ended };
}

function readSideband(input: Buffer, splits: number[] = []): Array<[Band, string]> {
  const got: Array<[Band, Buffer[]]> = [];
  const r = new SidebandReader((band, data) => {
    const tail = got[got.length - 1];
    if (tail && tail[0] === band) tail[1].push(data);
    else got.push([band, [data]]);
  });
  let last = 0;
  for (const at of [...splits, input.length]) {
    r.push(input.subarray(last, at));
    last = at;
  }
  r.end();
  return got.map(([band, parts]) => [band, text(parts)]);
}

describe('sidechannel stdin framing (client writes)', () => {
  // The cases Gitaly's conn tests assert for its client writer.
  it('frames writes as pkt-lines without a band byte', () => {
    expect(encodeStdin(Buffer.alloc(0))).toEqual([]);
    expect(text(encodeStdin(Buffer.from('h')))).toBe('0005h');
    expect(text(encodeStdin(Buffer.from('hello')))).toBe('0009hello');
    const max = Buffer.alloc(MAX_STDIN_PAYLOAD, 'a');
    expect(text(encodeStdin(max))).toBe(`fff0${max.toString()}`);
    expect(text(encodeStdin(Buffer.concat([max, Buffer.from('b')])))).toBe(`fff0${max.toString()}0005b`);
  });

  it('hands out slices of the caller buffer (no copy of the payload)', () => {
    const data = Buffer.from('hello world');
    const [, payload] = encodeStdin(data);
    expect(payload?.buffer).toBe(data.buffer);
  });
});

describe('sidechannel stdin reading (Gitaly reads)', () => {
  it('flush is the end; bytes after it are ignored', () => {
    expect(deframe(Buffer.from('0000'))).toEqual({ stdin: Buffer.alloc(0), ended: true });
    expect(deframe(Buffer.from('00040000'))).toEqual({ stdin: Buffer.alloc(0), ended: true });
    expect(deframe(Buffer.from('0009hello0000trashtrash')).stdin.toString()).toBe('hello');
    expect(deframe(Buffer.from('0009hello0006, 0009world0000')).stdin.toString()).toBe('hello, world');
  });

  it('rejects the special packets 0001–0003 with Gitaly’s text', () => {
    for (const n of [1, 2, 3]) {
      expect(() => deframe(Buffer.from(`000${n}`))).toThrow(`sidechannel: invalid header ${n}`);
    }
    expect(() => deframe(Buffer.from('zzzz'))).toThrow(SidechannelError);
    expect(() => deframe(Buffer.from('fff1'))).toThrow('invalid header 65521');
  });

  it('end of stream without the flush is an unexpected EOF', () => {
    const d = new StdinDeframer();
    d.push(Buffer.from('0009hello'));
    expect(() => d.end()).toThrow('sidechannel: unexpected EOF');
    const ok = new StdinDeframer();
    ok.push(Buffer.from('0000'));
    expect(() => ok.end()).not.toThrow();
  });

  it('round-trips any stdin split at any byte (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (writes, rawSplits) => {
          const wire = Buffer.concat([
            ...writes.flatMap((w) => encodeStdin(Buffer.from(w))),
            Buffer.from('0000'),
          ]);
          const splits = rawSplits.map((s) => s % (wire.length + 1)).sort((a, b) => a - b);
          const r = deframe(wire, splits);
          expect(r.ended).toBe(true);
          expect(r.stdin.equals(Buffer.concat(writes.map((w) => Buffer.from(w))))).toBe(true);
        },
      ),
      { numRuns: 75_000 },
    );
  });

  it('gives the same stdin when the stream is split at every byte boundary', () => {
    const stdin = Buffer.concat([
      Buffer.from('0032want 0123456789012345678901234567890123456789\n'),
      Buffer.from('x'.repeat(300)),
    ]);
    const wire = Buffer.concat([...encodeStdin(stdin), Buffer.from('0000trailing')]);
    for (let at = 0; at <= wire.length; at++) {
      expect(deframe(wire, [at]).stdin.equals(stdin)).toBe(true);
    }
  });

  it('never throws anything but a SidechannelError on garbage (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(64), (bytes, split) => {
        const buf = Buffer.from(bytes);
        try {
          deframe(buf, [Math.min(split, buf.length)]);
        } catch (err) {
          expect(err).toBeInstanceOf(SidechannelError);
        }
      }),
      { numRuns: 25_000 },
    );
  });
});

describe('sideband (Gitaly writes, client reads)', () => {
  it('writes band 1 and 2 packets of at most 65515 data bytes', () => {
    expect(text(encodeSideband(1, Buffer.from('pack')))).toBe('0009\x01pack');
    expect(text(encodeSideband(2, Buffer.from('warn\n')))).toBe('000a\x02warn\n');
    const big = Buffer.alloc(MAX_SIDEBAND_DATA + 1, 'x');
    const parts = encodeSideband(1, big);
    expect(parts.map((p) => p.length)).toEqual([5, MAX_SIDEBAND_DATA, 5, 1]);
    expect(parts[0]?.toString('latin1')).toBe('fff0\x01');
  });

  it('demuxes bands, streaming a packet in pieces', () => {
    const wire = Buffer.concat([
      ...encodeSideband(1, Buffer.from('abc')),
      ...encodeSideband(2, Buffer.from('oops')),
      ...encodeSideband(1, Buffer.from('def')),
    ]);
    expect(readSideband(wire, [1, 2, 5, 6, 9, 15])).toEqual([
      [1, 'abc'],
      [2, 'oops'],
      [1, 'def'],
    ]);
  });

  it('gives the same bands when the stream is split at every byte boundary', () => {
    const wire = Buffer.concat([
      ...encodeSideband(2, Buffer.from('Enumerating objects: 3, done.\n')),
      ...encodeSideband(1, Buffer.from('PACK'.repeat(40))),
      ...encodeSideband(2, Buffer.from('done\n')),
    ]);
    const whole = readSideband(wire);
    for (let at = 0; at <= wire.length; at++) expect(readSideband(wire, [at])).toEqual(whole);
  });

  it('refuses flush, special packets, missing and unknown bands', () => {
    expect(() => readSideband(Buffer.from('0000'))).toThrow('invalid sideband packet');
    expect(() => readSideband(Buffer.from('0001'))).toThrow('invalid sideband packet');
    expect(() => readSideband(Buffer.from('0004'))).toThrow('invalid sideband packet');
    expect(() => readSideband(Buffer.from('0006\x03x'))).toThrow('unexpected band: 3');
    expect(() => readSideband(Buffer.from('fff1'))).toThrow('invalid sideband packet');
    expect(() => readSideband(Buffer.from('0009\x01pa'))).toThrow('response ended inside a packet');
  });

  it('round-trips any band sequence split at any byte (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom<Band>(1, 2), fc.uint8Array({ minLength: 1, maxLength: 100 })), {
          maxLength: 6,
        }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (packets, rawSplits) => {
          const wire = Buffer.concat(packets.flatMap(([band, d]) => encodeSideband(band, Buffer.from(d))));
          const splits = rawSplits.map((s) => s % (wire.length + 1)).sort((a, b) => a - b);
          const got: Array<[Band, number]> = [];
          const reader = new SidebandReader((band, data) => {
            for (const byte of data) got.push([band, byte]);
          });
          let last = 0;
          for (const at of [...splits, wire.length]) {
            reader.push(wire.subarray(last, at));
            last = at;
          }
          reader.end();
          expect(got).toEqual(packets.flatMap(([band, d]) => [...d].map((b) => [band, b])));
        },
      ),
      { numRuns: 75_000 },
    );
  });

  it('never throws anything but a SidechannelError on garbage (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          readSideband(Buffer.from(bytes));
        } catch (err) {
          expect(err).toBeInstanceOf(SidechannelError);
        }
      }),
      { numRuns: 25_000 },
    );
  });
});

describe('sidechannel id', () => {
  it('is 8 bytes big-endian', () => {
    expect(encodeSidechannelId(1n).toString('hex')).toBe('0000000000000001');
    expect(decodeSidechannelId(encodeSidechannelId(2n ** 40n + 7n))).toBe(2n ** 40n + 7n);
  });
});
