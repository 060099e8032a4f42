import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  crc32,
  decodeRoutablePayload,
  decodeRoutableToken,
  encodeRoutableToken,
  encodeRoutingPayload,
  MAX_FIELD_VALUE,
  RoutableTokenError,
} from './routable-token.js';

/** The worked examples of cells-routing.md §2.4. */
const MIN_TOKEN = 'EL25d_AKXDUtqLnIQHEpkG86MQM.01.0r1ajj2i3';
const PAT_TOKEN = 'glpat-AAECAwQFBgcICQoLDA0OD2M6MgpvOjEKdTpycww.01.131wrbkjv';
const MAX_TOKEN =
  '++++++++++++++++++++LB4hkKqprRab1Y3A72WqTPSDo2FS1t1qgJTIhL2O_kp90C8s8cL55xHQtmr-eVFugNkcwt0PZgzKqS3RI2ku4fBjOjN3NWUxMTI2NHNnc2YKZzozdzVlMTEyNjRzZ3NmCmg6M3c1ZTExMjY0c2dzZgpqOjN3NWUxMTI2NHNnc2YKazozdzVlMTEyNjRzZ3NmCmw6M3c1ZTExMjY0c2dzZgptOjN3NWUxMTI2NHNnc2YKbzozdzVlMTEyNjRzZ3NmCnA6M3c1ZTExMjY0c2dzZgp1OjN3NWUxMTI2NHNnc2af.01.8c0kai99b';

const bytes0to15 = Buffer.from(Array.from({ length: 16 }, (_, i) => i));

/** The 2-char base36 length field for a base64 payload. */
const len36 = (b64: string) => b64.length.toString(36).padStart(2, '0');

function failure(fn: () => unknown): RoutableTokenError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RoutableTokenError) return err;
    throw err;
  }
  throw new Error('expected a RoutableTokenError');
}

describe('crc32', () => {
  it('is CRC-32/IEEE as zlib computes it', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (b) => crc32(b) === zlibCrc32(b)));
  });
});

describe('worked examples (cells-routing.md §2.4)', () => {
  it('decodes and re-encodes the minimal token (no prefix, o:1)', () => {
    const decoded = decodeRoutableToken(MIN_TOKEN);
    expect(decoded.prefix).toBe('');
    expect(decoded.fields).toEqual({ o: '1' });
    expect(decoded.random).toHaveLength(16);
    expect(encodeRoutableToken('', { o: 1 }, decoded.random)).toBe(MIN_TOKEN);
  });

  it('encodes the computed glpat- example bit for bit (random 00..0f, c=2, o=1, u=1000)', () => {
    expect(encodeRoutingPayload({ u: 1000, c: 2, o: 1 })).toBe('c:2\no:1\nu:rs');
    expect(encodeRoutableToken('glpat-', { c: 2, o: 1, u: 1000 }, bytes0to15)).toBe(PAT_TOKEN);
    expect(decodeRoutableToken(PAT_TOKEN)).toEqual({
      prefix: 'glpat-',
      fields: { c: '2', o: '1', u: '1000' },
      random: bytes0to15,
    });
  });

  it('round-trips the 333-character maximum token (20-char prefix, 65 random bytes, 10 keys)', () => {
    expect(MAX_TOKEN).toHaveLength(333);
    const decoded = decodeRoutableToken(MAX_TOKEN);
    expect(decoded.prefix).toBe('+'.repeat(20));
    expect(decoded.random).toHaveLength(65);
    const max = MAX_FIELD_VALUE.toString(10);
    expect(decoded.fields).toEqual(Object.fromEntries([...'cghjklmopu'].map((k) => [k, max])));
    const fields = Object.fromEntries([...'cghjklmopu'].map((k) => [k, MAX_FIELD_VALUE]));
    expect(encodeRoutableToken(decoded.prefix, fields, decoded.random)).toBe(MAX_TOKEN);
  });

  it('decodes what a router rule captures (payload may start with prefix characters)', () => {
    // `^glpat-(?<payload>…)` captures only the base64; a looser regex may capture the prefix too.
    expect(decodeRoutablePayload('AAECAwQFBgcICQoLDA0OD2M6MgpvOjEKdTpycww', '13').fields).toEqual({
      c: '2',
      o: '1',
      u: '1000',
    });
    expect(decodeRoutablePayload('glpat-AAECAwQFBgcICQoLDA0OD2M6MgpvOjEKdTpycww', '13').fields.c).toBe('2');
  });
});

describe('malformed tokens', () => {
  it.each([
    ['format', 'glpat-abc'],
    ['format', ''],
    ['version', MIN_TOKEN.replace('.01.', '.02.')],
    ['checksum', `${MIN_TOKEN.slice(0, -1)}4`],
    ['checksum', `x${MIN_TOKEN}`],
  ] as const)('rejects %s: %s', (reason, token) => {
    expect(failure(() => decodeRoutableToken(token)).reason).toBe(reason);
  });

  it('rejects bad payload lengths, base64 and routing lines with typed errors', () => {
    const b64 = 'AAECAwQFBgcICQoLDA0OD2M6MgpvOjEKdTpycww';
    expect(failure(() => decodeRoutablePayload(b64, '0q')).reason).toBe('length'); // 26 < 27
    expect(failure(() => decodeRoutablePayload(b64, '8d')).reason).toBe('length'); // 301 > 300
    expect(failure(() => decodeRoutablePayload(b64, '14')).reason).toBe('length'); // longer than given
    expect(failure(() => decodeRoutablePayload(b64, 'A1')).reason).toBe('length');
    expect(failure(() => decodeRoutablePayload(`${b64.slice(0, -1)}*`, '13')).reason).toBe('base64');
    // Length byte claims more routing bytes than leave 16 random bytes.
    const short = Buffer.concat([Buffer.alloc(16), Buffer.from('o:1'), Buffer.from([10])]).toString(
      'base64url',
    );
    expect(failure(() => decodeRoutablePayload(short, len36(short))).reason).toBe('payload');
    const tooRandom = Buffer.concat([Buffer.alloc(66), Buffer.from('o:1'), Buffer.from([3])]).toString(
      'base64url',
    );
    expect(failure(() => decodeRoutablePayload(tooRandom, len36(tooRandom))).reason).toBe('payload');
    const notKv = Buffer.concat([Buffer.alloc(16), Buffer.from('o=1'), Buffer.from([3])]).toString(
      'base64url',
    );
    expect(failure(() => decodeRoutablePayload(notKv, len36(notKv))).message).toMatch(/"o=1"/);
    const twice = Buffer.concat([Buffer.alloc(16), Buffer.from('o:1\no:2'), Buffer.from([7])]).toString(
      'base64url',
    );
    expect(failure(() => decodeRoutablePayload(twice, len36(twice))).message).toMatch(/twice/);
  });

  it('refuses to encode what GitLab would not generate', () => {
    expect(failure(() => encodeRoutableToken('glpat-', { u: 1 })).message).toMatch(/\(c\) or .*\(o\)/);
    expect(failure(() => encodeRoutableToken('glpat-', { o: -1 })).reason).toBe('encode');
    expect(failure(() => encodeRoutableToken('glpat-', { o: 1.5 })).reason).toBe('encode');
    expect(failure(() => encodeRoutableToken('glpat-', { o: MAX_FIELD_VALUE + 1n })).reason).toBe('encode');
    expect(failure(() => encodeRoutableToken('glpat-', { org: 1 })).reason).toBe('encode');
    expect(failure(() => encodeRoutableToken('x'.repeat(21), { o: 1 })).reason).toBe('encode');
    expect(failure(() => encodeRoutableToken('', { o: 1 }, Buffer.alloc(15))).reason).toBe('encode');
  });

  it('drops blank fields as GitLab does', () => {
    const token = encodeRoutableToken('glrt-', { c: 3, o: 3, g: null, p: 5, u: undefined, t: 3 });
    expect(decodeRoutableToken(token).fields).toEqual({ c: '3', o: '3', p: '5', t: '3' });
  });
});

const PREFIX_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789_-+'.split('');
const prefixArb = fc.string({ unit: fc.constantFrom(...PREFIX_CHARS), maxLength: 20 });
const fieldsArb = fc
  .record(
    {
      c: fc.bigInt({ min: 0n, max: MAX_FIELD_VALUE }),
      g: fc.bigInt({ min: 0n, max: MAX_FIELD_VALUE }),
      o: fc.bigInt({ min: 0n, max: MAX_FIELD_VALUE }),
      p: fc.bigInt({ min: 0n, max: MAX_FIELD_VALUE }),
      u: fc.bigInt({ min: 0n, max: MAX_FIELD_VALUE }),
      t: fc.integer({ min: 1, max: 3 }),
    },
    { requiredKeys: ['c'] },
  )
  .chain((f) => fc.constantFrom({ ...f }, { ...f, c: undefined, o: f.o ?? 1n }));
const randomArb = fc.uint8Array({ minLength: 16, maxLength: 65 });

function expectedFields(fields: Record<string, bigint | number | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter((e): e is [string, bigint | number] => e[1] !== undefined)
      .map(([k, v]) => [k, BigInt(v).toString(10)]),
  );
}

describe('properties', () => {
  it('decode(encode(prefix, fields, random)) gives back prefix, fields and random', () => {
    fc.assert(
      fc.property(prefixArb, fieldsArb, randomArb, (prefix, fields, random) => {
        const token = encodeRoutableToken(prefix, fields, random);
        expect(token).toMatch(/\.01\.[0-9a-z]{9}$/);
        const decoded = decodeRoutableToken(token);
        expect(decoded.prefix).toBe(prefix);
        expect(decoded.fields).toEqual(expectedFields(fields));
        expect(decoded.random.equals(Buffer.from(random))).toBe(true);
      }),
    );
  });

  /**
   * Property: replacing any one character of a valid token by another printable ASCII character is
   * always rejected. A one-character substitution changes at most 8 consecutive bits of the text the
   * CRC-32 covers (or the CRC field itself, or the version), and CRC-32 detects every burst error
   * of 32 bits or less, so no substitution can collide; the decoder must never accept one.
   */
  it('rejects every single-character substitution', () => {
    const printable = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(
        prefixArb,
        fieldsArb,
        randomArb,
        fc.nat(),
        printable,
        (prefix, fields, random, at, replacement) => {
          const token = encodeRoutableToken(prefix, fields, random);
          const i = at % token.length;
          fc.pre(token[i] !== replacement);
          const corrupted = token.slice(0, i) + replacement + token.slice(i + 1);
          expect(() => decodeRoutableToken(corrupted)).toThrow(RoutableTokenError);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
