import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { CellDirectory } from '../cells/directory.js';
import type { LearnAnswer } from '../cells/internal-api.js';
import type { CellConfig } from '../config.js';
import { createMetrics } from '../metrics.js';
import { Classifier, type Learner } from './classifier.js';

const CELLS: CellConfig[] = [
  { id: 1, name: 'cell_us0', legacy: true, region: 'us', url: 'http://127.0.0.1:1' },
  { id: 2, name: 'cell_eu0', legacy: false, region: 'eu', url: 'http://127.0.0.1:2' },
  { id: 3, name: 'cell_eu1', legacy: false, region: 'eu', url: 'http://127.0.0.1:3' },
];

const log = createLogger('router-test', 'silent');
let directory: CellDirectory | undefined;

afterEach(async () => {
  await directory?.close();
});

function setup(answer: (path: string) => LearnAnswer | Error | Promise<LearnAnswer>, maxTtlMs = 60_000) {
  const asked: { cell: string; path: string; method: string }[] = [];
  const learner: Learner = {
    async learn(cell, method, path) {
      asked.push({ cell: cell.name, path, method });
      const a = await answer(path);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  const metrics = createMetrics();
  const clock = { now: 0 };
  directory = new CellDirectory(CELLS, 'eu');
  const classifier = new Classifier(directory, learner, metrics, log, {
    maxEntries: 100,
    maxTtlMs,
    now: () => clock.now,
  });
  return { classifier, metrics, asked, clock };
}

const ctx = { requestId: 'r' };

describe('Classifier', () => {
  it('learns on a miss from a cell of its region, then answers from the cache', async () => {
    const { classifier, metrics, asked } = setup(() => ({
      path: '/my-company',
      cell: 'cell_eu0',
      source: 'routable',
      exact: false,
      cacheTtl: 60,
    }));
    expect((await classifier.classify('/my-company/a', 'GET', ctx)).via).toBe('learn');
    const second = await classifier.classify('/my-company/b', 'GET', ctx);
    expect(second).toMatchObject({ via: 'cache', cell: { name: 'cell_eu0' } });
    expect(asked).toHaveLength(1);
    expect(['cell_eu0', 'cell_eu1']).toContain(asked[0]?.cell);
    expect(metrics).toMatchObject({ routeCacheHits: 1, routeCacheMisses: 1, learns: 1, fallbacks: 0 });
  });

  it("gives the learn answer's source, fresh and from the cache", async () => {
    const { classifier } = setup((path) => ({
      path: path.startsWith('/users') ? '/users' : '/nobody',
      cell: 'cell_us0',
      source: path.startsWith('/users') ? 'fixed' : 'fallback',
      exact: false,
      cacheTtl: 60,
    }));
    expect(await classifier.classify('/users/sign_in', 'GET', ctx)).toMatchObject({
      via: 'learn',
      source: 'fixed',
    });
    expect(await classifier.classify('/users/x', 'GET', ctx)).toMatchObject({
      via: 'cache',
      source: 'fixed',
    });
    expect(await classifier.classify('/nobody/p', 'GET', ctx)).toMatchObject({
      via: 'learn',
      source: 'fallback',
    });
    expect(await classifier.classify('/nobody/q', 'GET', ctx)).toMatchObject({
      via: 'cache',
      source: 'fallback',
    });
  });

  it('falls back to the legacy cell when learning fails, without caching', async () => {
    const { classifier, metrics, asked } = setup(() => new Error('boom'));
    expect(await classifier.classify('/x/y', 'GET', ctx)).toMatchObject({
      via: 'fallback',
      source: 'fallback',
      cell: { name: 'cell_us0' },
    });
    await classifier.classify('/x/y', 'GET', ctx);
    expect(asked).toHaveLength(2);
    expect(metrics.fallbacks).toBe(2);
  });

  it('treats an unknown cell name as a learn failure', async () => {
    const { classifier, metrics } = setup(() => ({
      path: '/x',
      cell: 'cell_mars',
      source: 'routable',
      exact: false,
      cacheTtl: 60,
    }));
    expect((await classifier.classify('/x/y', 'GET', ctx)).cell.name).toBe('cell_us0');
    expect(metrics.fallbacks).toBe(1);
  });

  it('does not cache answers with cache_ttl 0 and caps long TTLs', async () => {
    const { classifier, asked, clock } = setup(
      (path) => ({
        path,
        cell: 'cell_eu1',
        source: 'fallback',
        exact: true,
        cacheTtl: path === '/ttl0' ? 0 : 3600,
      }),
      1000,
    );
    await classifier.classify('/ttl0', 'GET', ctx);
    await classifier.classify('/ttl0', 'GET', ctx);
    expect(asked).toHaveLength(2);
    await classifier.classify('/long', 'GET', ctx);
    clock.now = 999;
    expect((await classifier.classify('/long', 'GET', ctx)).via).toBe('cache');
    clock.now = 1000;
    expect((await classifier.classify('/long', 'GET', ctx)).via).toBe('learn');
  });

  it('caches an answer about another path for the asked path only', async () => {
    const { classifier, asked } = setup(() => ({
      path: '/elsewhere',
      cell: 'cell_eu0',
      source: 'routable',
      exact: false,
      cacheTtl: 60,
    }));
    await classifier.classify('/asked/one', 'GET', ctx);
    expect((await classifier.classify('/asked/one', 'GET', ctx)).via).toBe('cache');
    expect((await classifier.classify('/asked/two', 'GET', ctx)).via).toBe('learn');
    expect(asked).toHaveLength(2);
  });

  it('shares one learn call between concurrent misses and relearns after invalidate', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const { classifier, asked } = setup(async () => {
      await gate;
      return { path: '/ns', cell: 'cell_eu0', source: 'routable', exact: false, cacheTtl: 60 };
    });
    const both = Promise.all([
      classifier.classify('/ns/a', 'GET', ctx),
      classifier.classify('/ns/a', 'GET', ctx),
    ]);
    release();
    await both;
    expect(asked).toHaveLength(1);
    classifier.invalidate('/ns/a');
    expect((await classifier.classify('/ns/a', 'GET', ctx)).via).toBe('learn');
    expect(asked).toHaveLength(2);
  });
});

const nameArb = fc
  .stringMatching(/^[a-z0-9][a-z0-9._-]{0,11}$/)
  .filter((n) => !n.endsWith('.') && n !== '.' && n !== '..');

describe('Classifier properties', () => {
  it('caches an answer only for paths below its own path, whatever the cell decoded', async () => {
    // The cell may answer the right namespace, a truncated one (`john` for `john.doe`), one with the
    // suffix kept, another namespace or the root: later paths of other namespaces must not be served
    // from the cache.
    await fc.assert(
      fc.asyncProperty(
        nameArb,
        fc.constantFrom('', '.json', '/project', '/project.json', '.atom/x'),
        fc.constantFrom('right', 'truncated', 'suffixed', 'other', 'root'),
        nameArb,
        async (name, tail, kind, other) => {
          const asked = `/${name}${tail}`;
          const answered = {
            right: `/${name}`,
            truncated: `/${name.split('.')[0]}`,
            suffixed: `/${name}${tail.split('/')[0]}`,
            other: `/${other}`,
            root: '/',
          }[kind];
          const { classifier, asked: learned } = setup(() => ({
            path: answered,
            cell: 'cell_eu0',
            source: 'routable',
            exact: false,
            cacheTtl: 60,
          }));
          await classifier.classify(asked, 'GET', ctx);
          const probe = `/${other}/page`;
          const result = await classifier.classify(probe, 'GET', ctx);
          const coveredByAnswer =
            answered !== '/' &&
            (asked === answered || asked.startsWith(`${answered}/`)) &&
            (probe === answered || probe.startsWith(`${answered}/`));
          expect(result.via).toBe(coveredByAnswer ? 'cache' : 'learn');
          expect(learned).toHaveLength(coveredByAnswer ? 1 : 2);
          await directory?.close();
        },
      ),
      { numRuns: 200 },
    );
  });
});
