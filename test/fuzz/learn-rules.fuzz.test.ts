import { Readable, Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../lib/errors.js';
import { jwtKey } from '../../lib/jwt.js';
import type { CellDirectory } from '../../router/cells/directory.js';
import { InternalApi } from '../../router/cells/internal-api.js';
import type { CellConfig } from '../../router/config.js';
import { RouterError } from '../../router/errors.js';
import defaultRules from '../../router/rules/default-rules.json' with { type: 'json' };
import { loadRuleset, RulesetError } from '../../router/rules/load.js';
import { expectTyped, FUZZ_RUNS, runs, settle } from './budget.js';

const CELL = { name: 'cell_a', url: 'http://127.0.0.1:1' } as CellConfig;
const ROUTER_CODES = new Set(Object.values(RouterError).map((f) => f.code));

/** An InternalApi whose one cell answers `status` + `text` to everything. */
function apiAnswering(status: number, text: Buffer): InternalApi {
  const transport = {
    open: async () => ({
      body: new Writable({ write: (_c, _e, cb) => cb() }),
      response: Promise.resolve({ status, headers: {}, body: Readable.from([text]) }),
      cancel: () => undefined,
    }),
    close: async () => undefined,
  };
  const cells = { transport: () => transport, preferenceOrder: () => [CELL] } as unknown as CellDirectory;
  return new InternalApi(cells, jwtKey('secret'), 1_000);
}

const learnJsonArb = fc.oneof(
  fc.record(
    {
      path: fc.oneof(fc.constantFrom('/', '/group', '/a/b', ''), fc.string({ maxLength: 30 }), fc.integer()),
      cell: fc.oneof(fc.constantFrom('cell_a', ''), fc.string({ maxLength: 10 }), fc.constant(null)),
      source: fc.oneof(fc.constantFrom('routable', 'fixed', 'fallback', 'FIXED', ''), fc.jsonValue()),
      exact: fc.oneof(fc.boolean(), fc.jsonValue()),
      cache_ttl: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 0, 1e308, Number.NaN), fc.string()),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);

describe(`learn answers fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('any answer becomes a checked route or a router error with a registry code', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          learnJsonArb.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
          fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b)),
        ),
        fc.constantFrom(200, 200, 201, 404, 421, 500, 503),
        async (body, status) => {
          try {
            const r = await apiAnswering(status, body).learn(CELL, 'GET', '/group/project', {
              requestId: 'f',
            });
            expect(r.path.startsWith('/')).toBe(true);
            expect(['routable', 'fixed', 'fallback']).toContain(r.source);
            expect(typeof r.cell).toBe('string');
            expect(Number.isFinite(r.cacheTtl) && r.cacheTtl >= 0).toBe(true);
          } catch (err) {
            if (!(isAppError(err) && ROUTER_CODES.has(err.code))) throw err;
          }
        },
      ),
      runs(),
    );
  });
});

/** Rule files: the shipped one with fields replaced by arbitrary JSON, and arbitrary JSON. */
function mutateRules(path: string[], value: unknown): unknown {
  const copy = structuredClone(defaultRules) as unknown;
  let at = copy as Record<string, unknown>;
  for (const [i, key] of path.entries()) {
    const keys = at && typeof at === 'object' ? Object.keys(at) : [];
    if (keys.length === 0) break;
    const k = keys[Number(key) % keys.length] as string;
    if (i === path.length - 1 || typeof at[k] !== 'object' || at[k] === null) {
      at[k] = value;
      break;
    }
    at = at[k] as Record<string, unknown>;
  }
  return copy;
}

describe(`rule files fuzz (${FUZZ_RUNS} cases per property)`, () => {
  it('a rule file loads into a ruleset or is refused with a RulesetError naming the field', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc
            .tuple(fc.array(fc.nat({ max: 20 }).map(String), { minLength: 1, maxLength: 5 }), fc.jsonValue())
            .map(([p, v]) => mutateRules(p, v)),
          fc.jsonValue(),
        ),
        (file) => {
          const r = settle(() => loadRuleset(file));
          if (!r.ok) return expectTyped(r.error, RulesetError);
          expect(Array.isArray(r.value.rules)).toBe(true);
        },
      ),
      runs(),
    );
  });
});
