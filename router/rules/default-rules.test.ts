import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeRoutableToken } from '../../lib/routable-token.js';
import { loadDefaultRuleset } from './default-ruleset.js';
import { evaluate } from './engine.js';
import { classifiedCellId } from './http.js';
import type { RuleRequest } from './types.js';

/** Properties of the bundled ruleset: what a cell encodes in a token is what the router routes by. */
const ruleset = loadDefaultRuleset();

const cellIdArb = fc.integer({ min: 0, max: 999_999_999_999_999 });
const idArb = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const randomArb = fc.uint8Array({ minLength: 16, maxLength: 40 });
const otherFieldsArb = fc.record({ o: idArb, g: idArb, p: idArb, u: idArb }, { requiredKeys: [] });

/** Where a client may carry each kind of token, as the default rules read it. */
const placements = (token: string, runner: boolean): Record<string, string>[] => [
  { 'Private-Token': token },
  { authorization: `Bearer ${token}` },
  // Git over HTTP: the token is the password of Basic auth, whatever the login.
  { authorization: `Basic ${Buffer.from(`alice:${token}`).toString('base64')}` },
  ...(runner ? [{ 'runner-token': token }, { 'JOB-TOKEN': token }] : []),
];

function request(headers: Record<string, string>, cookies: Record<string, string> = {}): RuleRequest {
  return { method: 'GET', path: '/api/v4/user', headers, cookies };
}

describe('default ruleset properties', () => {
  it('routes every routable PAT and runner token to the cell id it encodes, in every header', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('glpat-', 'glrt-', 'glrtr-'),
        cellIdArb,
        otherFieldsArb,
        randomArb,
        fc.integer({ min: 0, max: 9 }),
        (prefix, c, fields, random, sessionCell) => {
          const token = encodeRoutableToken(prefix, { ...fields, c }, random);
          for (const headers of placements(token, prefix !== 'glpat-')) {
            // A session cookie of another cell never outranks the token.
            const result = evaluate(
              ruleset,
              request(headers, { _gitlab_session: `cell-${sessionCell}-${'a'.repeat(32)}` }),
            );
            expect(result).toMatchObject({ kind: 'classify', type: 'CELL_ID' });
            expect(classifiedCellId(result)).toBe(c);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves tokens without a cell id to the later rules', () => {
    fc.assert(
      fc.property(idArb, randomArb, fc.integer({ min: 1, max: 99 }), (o, random, sessionCell) => {
        const token = encodeRoutableToken('glpat-', { o }, random);
        const withSession = evaluate(
          ruleset,
          request({ 'private-token': token }, { _gitlab_session: `cell-${sessionCell}-${'f'.repeat(32)}` }),
        );
        expect(classifiedCellId(withSession)).toBe(sessionCell);
        expect(evaluate(ruleset, request({ 'private-token': token }))).toEqual({ kind: 'none' });
      }),
    );
  });
});

describe('Basic authorization (git over HTTP)', () => {
  it('a password that is no routable token is left to the later rules', () => {
    const basic = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
    expect(evaluate(ruleset, request({ authorization: basic }))).not.toMatchObject({ kind: 'classify' });
  });
});
