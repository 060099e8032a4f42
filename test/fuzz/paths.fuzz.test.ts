import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeProjectPath, resolveInStorage } from '../../lib/repo-path.js';
import { checkPublicPath } from '../../router/http/public-path.js';
import { bounded, FUZZ_RUNS, runs } from './budget.js';

/** The pieces of hostile paths: traversal, encodings (%2e, %2f, overlong UTF-8 %c0%ae), NUL, slashes. */
const pieceArb = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '',
    '%2e',
    '%2E%2e',
    '%2f',
    '%5c',
    '%00',
    '\0',
    '%c0%ae',
    '%e0%80%ae',
    '%',
    '%zz',
    '~',
    ';x=1',
    '.git',
    '.atom',
    '\\',
    'é',
    '\u202e',
  ),
  fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,12}$/),
  fc.string({ maxLength: 8 }),
);
const pathArb = fc.oneof(
  fc
    .array(pieceArb, { maxLength: 8 })
    .chain((pieces) => fc.constantFrom('/', '//', '\\').map((sep) => pieces.join(sep))),
  fc.nat({ max: 3 }).map((n) => `${'a'.repeat(4096 + n)}/${'b'.repeat(10)}`),
  fc.array(fc.constantFrom('a', 'b'), { minLength: 1, maxLength: 1000 }).map((s) => s.join('/')),
);

/** Every spelling of `/api/v4/internal/<rest>` a Rails router would read as the internal API. */
function spell(word: string, mask: number[]): string {
  return [...word]
    .map((ch, i) => {
      const m = mask[i % mask.length] ?? 0;
      if (m === 1) return `%${ch.charCodeAt(0).toString(16)}`;
      if (m === 2) return ch.toUpperCase();
      return ch;
    })
    .join('');
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

describe(`project path decoding fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('normalizeProjectPath returns only clean group/project paths, and is idempotent', () => {
    fc.assert(
      fc.property(pathArb, (raw) => {
        const p = bounded(() => normalizeProjectPath(raw));
        if (p === undefined) return;
        expect(p.split('/').length).toBeGreaterThanOrEqual(2);
        for (const seg of p.split('/')) {
          expect(seg).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/);
          expect(['.', '..']).not.toContain(seg);
        }
        expect(p).not.toMatch(/\0|%|\\|\/\//);
        expect(normalizeProjectPath(p)).toBe(p);
      }),
      runs(),
    );
  });

  it('resolveInStorage never leaves the storage', () => {
    fc.assert(
      fc.property(pathArb, (rel) => {
        const full = bounded(() => resolveInStorage('/srv/storage', rel));
        if (full !== undefined) expect(full.startsWith('/srv/storage/')).toBe(true);
      }),
      runs(),
    );
  });

  it('checkPublicPath refuses every spelling of the internal API and never throws', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom('/', '//', '/./', '/x/../', '/%2f'),
        // What follows the internal prefix: anything but a `..` that climbs back out of it.
        pathArb.filter((rest) => !/(^|[/\\])(\.|%2e){2}([/\\;]|$)/i.test(decodeSafe(rest))),
        (mask, sep, rest) => {
          const path = `/${spell('api', mask)}${sep}${spell('v4', mask)}${sep}${spell('internal', mask)}/${rest}`;
          const verdict = bounded(() => checkPublicPath(path));
          expect(['internal', 'malformed']).toContain(verdict);
          expect(['public', 'internal', 'malformed']).toContain(checkPublicPath(rest));
        },
      ),
      runs(),
    );
  });
});
