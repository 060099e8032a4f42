import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RouteSource } from '../../lib/contracts/learn.js';
import { RouteCache } from './route-cache.js';

const route = (path: string, cell: string, exact: boolean, source: RouteSource = 'routable') => ({
  path,
  cell,
  exact,
  source,
});

function clock(start = 1000) {
  const c = { now: start };
  return { c, now: () => c.now };
}

describe('RouteCache', () => {
  it('serves a prefix entry for the prefix itself and every path below it', () => {
    const cache = new RouteCache(10);
    cache.store(route('/my-company', 'cell_eu0', false), 60_000);
    expect(cache.lookup('/my-company')?.cell).toBe('cell_eu0');
    expect(cache.lookup('/my-company/my-project')?.cell).toBe('cell_eu0');
    expect(cache.lookup('/my-company/sub/deep/-/issues')?.key).toBe('/my-company/');
    expect(cache.lookup('/my-company-other/x')).toBeUndefined();
  });

  it('serves an exact entry only for that path, before any prefix', () => {
    const cache = new RouteCache(10);
    cache.store(route('/-', 'cell_us1', false), 60_000);
    cache.store(route('/-/profile', 'cell_us0', true), 60_000);
    expect(cache.lookup('/-/profile')?.cell).toBe('cell_us0');
    expect(cache.lookup('/-/profile/keys')?.cell).toBe('cell_us1');
  });

  it('prefers the longest prefix', () => {
    const cache = new RouteCache(10);
    cache.store(route('/a', 'one', false), 60_000);
    cache.store(route('/a/b', 'two', false), 60_000);
    expect(cache.lookup('/a/b/c')?.cell).toBe('two');
    expect(cache.lookup('/a/c')?.cell).toBe('one');
  });

  it('forgets entries after their TTL and stores nothing for TTL 0', () => {
    const { c, now } = clock();
    const cache = new RouteCache(10, now);
    cache.store(route('/a', 'one', false), 1000);
    expect(cache.store(route('/b', 'two', false), 0)).toBeUndefined();
    c.now += 999;
    expect(cache.lookup('/a/x')?.cell).toBe('one');
    c.now += 1;
    expect(cache.lookup('/a/x')).toBeUndefined();
    expect(cache.lookup('/b/x')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry beyond its bound', () => {
    const cache = new RouteCache(2);
    cache.store(route('/a', 'one', false), 60_000);
    cache.store(route('/b', 'two', false), 60_000);
    cache.lookup('/a/x'); // /a is now the most recently used
    cache.store(route('/c', 'three', false), 60_000);
    expect(cache.size).toBe(2);
    expect(cache.lookup('/b/x')).toBeUndefined();
    expect(cache.lookup('/a/x')?.cell).toBe('one');
    expect(cache.lookup('/c/x')?.cell).toBe('three');
  });

  it('keeps the source of each learned route', () => {
    const cache = new RouteCache(10);
    cache.store(route('/unknown-ns', 'cell_us0', false, 'fallback'), 60_000);
    cache.store(route('/users', 'cell_us0', false, 'fixed'), 60_000);
    expect(cache.lookup('/unknown-ns/p')).toEqual({
      key: '/unknown-ns/',
      cell: 'cell_us0',
      exact: false,
      source: 'fallback',
    });
    expect(cache.lookup('/users/sign_in')?.source).toBe('fixed');
  });

  it('invalidates every entry that would route a path', () => {
    const cache = new RouteCache(10);
    cache.store(route('/a', 'one', false), 60_000);
    cache.store(route('/a/b', 'two', true), 60_000);
    cache.store(route('/z', 'three', false), 60_000);
    expect(cache.invalidate('/a/b')).toBe(2);
    expect(cache.lookup('/a/b')).toBeUndefined();
    expect(cache.lookup('/z/x')?.cell).toBe('three');
  });
});

/** Namespace-like names: letters, digits, `.`, `_`, `-` (never `.` or `..` alone). */
const nameArb = fc
  .stringMatching(/^[a-z0-9][a-z0-9._-]{0,11}$/)
  .filter((n) => !n.endsWith('.') && n !== '.' && n !== '..');
const suffixArb = fc.constantFrom('json', 'atom', 'xml', 'git', 'doe', 'html', 'jsonx');

/** A name that shares a prefix with `a`: the shapes that break dot- or suffix-unaware matching. */
const neighbourOf = (a: string) =>
  fc.oneof(
    suffixArb.map((s) => `${a}.${s}`),
    suffixArb.map((s) => `${a}${s}`),
    suffixArb.map((s) => `${a}-${s}`),
    suffixArb.map((s) => `${s}.${a}`),
    fc.constant(a.includes('.') ? (a.split('.')[0] as string) : `${a}_`),
    nameArb,
  );

describe('RouteCache properties', () => {
  it('never serves a dotted or suffixed name from the prefix of another namespace', () => {
    fc.assert(
      fc.property(
        nameArb.chain((a) => fc.tuple(fc.constant(a), neighbourOf(a))),
        fc.constantFrom('', '/-/issues', '/project', '/project.json', '.json'),
        ([a, b], tail) => {
          fc.pre(a.toLowerCase() !== b.toLowerCase());
          const cache = new RouteCache(10);
          cache.store(route(`/${a}`, 'cell_a', false), 60_000);
          cache.store(route(`/${a}/exact.json`, 'cell_a', true), 60_000);
          const probe = `/${b}${tail}`;
          const hit = cache.lookup(probe);
          // Only a probe that is really below /a may be served by /a's entries.
          const below = probe === `/${a}` || probe.startsWith(`/${a}/`);
          expect(hit === undefined ? undefined : hit.cell).toBe(below ? 'cell_a' : undefined);
        },
      ),
    );
  });

  it('serves every path below a learned namespace prefix, dotted or suffixed', () => {
    fc.assert(
      fc.property(nameArb, fc.array(nameArb, { maxLength: 4 }), (a, rest) => {
        const cache = new RouteCache(10);
        cache.store(route(`/${a}`, 'cell_a', false), 60_000);
        expect(cache.lookup(['', a, ...rest].join('/'))?.cell).toBe('cell_a');
      }),
    );
  });
});
