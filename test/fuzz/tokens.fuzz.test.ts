import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt, signWorkhorseJwt, verifyShellJwt, verifyWorkhorseJwt } from '../../lib/jwt.js';
import { decodeRoutableToken, encodeRoutableToken, RoutableTokenError } from '../../lib/routable-token.js';
import { bounded, expectTyped, FUZZ_RUNS, runs, settle } from './budget.js';

const CODES = new Set(['ROUTABLE_TOKEN_INVALID']);
const REASONS = new Set([
  'missing',
  'malformed',
  'bad-signature',
  'expired',
  'wrong-issuer',
  'missing-claim',
  'stale',
]);
const KEY = jwtKey('a-shared-secret-of-the-fuzz-target');

/** Flips, cuts or inserts characters of a valid token: the near misses a parser meets. */
function mutate(token: string, edits: Array<{ at: number; op: number; ch: string }>): string {
  let t = token;
  for (const { at, op, ch } of edits) {
    const i = at % (t.length + 1);
    t =
      op === 0
        ? t.slice(0, i) + ch + t.slice(i + 1)
        : op === 1
          ? t.slice(0, i) + t.slice(i + 1)
          : t.slice(0, i) + ch + t.slice(i);
  }
  return t;
}
const editsArb = fc.array(
  fc.record({ at: fc.nat(), op: fc.nat({ max: 2 }), ch: fc.constantFrom(...'aZ09-_.=+/%\0é'.split('')) }),
  { minLength: 1, maxLength: 4 },
);

describe(`routable token decoder fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('round-trips every encodable token', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z]{0,8}-?$/),
        fc.dictionary(fc.constantFrom('o', 'u', 'g', 'p'), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), {
          maxKeys: 4,
        }),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        fc.uint8Array({ minLength: 16, maxLength: 40 }),
        (prefix, fields, cell, random) => {
          // A routable token names a cell (c) or an organization (o).
          const token = encodeRoutableToken(prefix, { ...fields, c: cell }, random);
          const decoded = bounded(() => decodeRoutableToken(token));
          expect(Buffer.from(decoded.random).equals(Buffer.from(random))).toBe(true);
        },
      ),
      runs(),
    );
  });

  it('random strings and near misses decode or throw RoutableTokenError ROUTABLE_TOKEN_INVALID', () => {
    const valid = encodeRoutableToken('glrt-', { c: 2n, o: 7n }, Buffer.alloc(16, 7));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 400 }),
          editsArb.map((e) => mutate(valid, e)),
        ),
        (text) => {
          const r = settle(() => decodeRoutableToken(text));
          if (!r.ok) expectTyped(r.error, RoutableTokenError, CODES);
        },
      ),
      runs(),
    );
  });
});

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
/** A compact JWS from arbitrary header and payload, HMAC-signed with `key` (or a wrong one). */
function forge(header: unknown, payload: unknown, key: Uint8Array | undefined, sig?: string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const mac = sig ?? (key ? createHmac('sha256', key).update(input).digest('base64url') : '');
  return `${input}.${mac}`;
}

const now = () => Math.floor(Date.now() / 1000);
const headerArb = fc.oneof(
  fc.record({
    alg: fc.constantFrom('HS256', 'none', 'None', 'HS512', 'RS256', 'ES256', 'hs256', ''),
    typ: fc.constantFrom('JWT', 'jwt', undefined),
  }),
  fc.jsonValue(),
  fc.string({ maxLength: 40 }),
);
const claimsArb = fc.oneof(
  fc.record({
    iss: fc.constantFrom('gitlab-shell', 'gitlab-workhorse', 'gitlab', '', 'Gitlab-Shell'),
    iat: fc.oneof(
      fc.integer({ min: -400, max: 400 }).map((d) => now() + d),
      fc.string(),
      fc.constant(undefined),
    ),
    exp: fc.oneof(
      fc.integer({ min: -400, max: 400 }).map((d) => now() + d),
      fc.constant(undefined),
    ),
    gl_id: fc.oneof(fc.constantFrom('user-1', 'key-3'), fc.integer(), fc.constant(undefined)),
  }),
  fc.jsonValue(),
);

describe(`JWT parsing fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('forged headers, alg values, claims, lengths and keys: verified only when exactly right, else a known reason', async () => {
    const wrongKey = jwtKey('another-secret');
    await fc.assert(
      fc.asyncProperty(
        headerArb,
        claimsArb,
        fc.constantFrom('right', 'wrong', 'none', 'garbage'),
        fc.nat({ max: 3 }),
        async (header, claims, keyKind, extraDots) => {
          const key = keyKind === 'right' ? KEY : keyKind === 'wrong' ? wrongKey : undefined;
          let token = forge(header, claims, key, keyKind === 'garbage' ? 'x'.repeat(43) : undefined);
          token += '.'.repeat(extraDots === 3 ? 1 : 0);
          for (const result of [await verifyShellJwt(KEY, token), await verifyWorkhorseJwt(KEY, token)]) {
            if (result.ok) {
              expect(keyKind).toBe('right');
              expect((header as { alg?: unknown }).alg).toBe('HS256');
            } else expect(REASONS.has(result.reason)).toBe(true);
          }
        },
      ),
      runs(),
    );
  });

  it('arbitrary strings and near misses of real tokens never throw and are refused with a known reason', async () => {
    const shell = await signShellJwt(KEY, 'user-1');
    const workhorse = await signWorkhorseJwt(KEY);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 600 }),
          editsArb.map((e) => mutate(shell, e)),
          editsArb.map((e) => mutate(workhorse, e)),
        ),
        async (token) => {
          const results = [await verifyShellJwt(KEY, token), await verifyWorkhorseJwt(KEY, token)];
          for (const r of results) if (!r.ok) expect(REASONS.has(r.reason)).toBe(true);
        },
      ),
      runs(),
    );
  });
});
