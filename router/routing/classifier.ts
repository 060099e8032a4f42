import type { RouteSource } from '../../lib/contracts/learn.js';
import type { Logger } from '../../lib/logger.js';
import type { CellDirectory } from '../cells/directory.js';
import type { CallContext, LearnAnswer } from '../cells/internal-api.js';
import type { CellConfig } from '../config.js';
import type { RouterMetrics } from '../metrics.js';
import { RouteCache } from './route-cache.js';

/**
 * Which cell owns a path: the route cache, else a learn call to a random cell of the router's
 * region (`GET /api/v4/internal/cells/learn`), cached for the answer's `cache_ttl` (bounded by
 * `maxTtlMs`). When learning fails the legacy cell gets the request (counted as a fallback).
 * Shared by the SSH front and the HTTP front.
 */
export interface Classification {
  cell: CellConfig;
  via: 'cache' | 'learn' | 'fallback';
  /**
   * The learn answer's source (also for cached routes). `fallback` (always so when learning failed):
   * the path does not decide the cell and `cell` is the legacy cell; the HTTP front's rules may
   * choose another one.
   */
  source: RouteSource;
}

export interface Learner {
  learn(cell: CellConfig, method: string, pathInfo: string, ctx: CallContext): Promise<LearnAnswer>;
}

export interface ClassifierOptions {
  maxEntries: number;
  maxTtlMs: number;
  now?: () => number;
}

export class Classifier {
  private readonly cache: RouteCache;
  private readonly inflight = new Map<string, Promise<Classification>>();

  constructor(
    private readonly cells: CellDirectory,
    private readonly learner: Learner,
    private readonly metrics: RouterMetrics,
    private readonly log: Logger,
    private readonly opts: ClassifierOptions,
  ) {
    this.cache = new RouteCache(opts.maxEntries, opts.now);
  }

  async classify(path: string, method: string, ctx: CallContext): Promise<Classification> {
    const hit = this.cache.lookup(path);
    const hitCell = hit && this.cells.get(hit.cell);
    if (hitCell) {
      this.metrics.routeCacheHits++;
      return { cell: hitCell, via: 'cache', source: hit.source };
    }
    this.metrics.routeCacheMisses++;
    // Concurrent misses for one path share one learn call.
    const key = `${method} ${path}`;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    // The learn call is shared, so it does not follow one caller's cancellation (it has its own deadline).
    const p = this.learn(path, method, { ...ctx, signal: undefined }).finally(() =>
      this.inflight.delete(key),
    );
    this.inflight.set(key, p);
    return p;
  }

  /** Forgets what the cache says about `path` (after a `421`). */
  invalidate(path: string): void {
    const dropped = this.cache.invalidate(path);
    this.log.debug({ path, dropped }, 'route invalidated');
  }

  private async learn(path: string, method: string, ctx: CallContext): Promise<Classification> {
    const asked = this.cells.pickRegional();
    this.metrics.learns++;
    try {
      const answer = await this.learner.learn(asked, method, path, ctx);
      const cell = this.cells.get(answer.cell);
      if (!cell) throw new Error(`learn named an unknown cell "${answer.cell}"`);
      const covers = answer.exact ? answer.path === path : covered(path, answer.path);
      // An answer about another path than the one asked is cached for the asked path only.
      const [routePath, exact] = covers ? [answer.path, answer.exact] : [path, true];
      const ttlMs = Math.min(answer.cacheTtl * 1000, this.opts.maxTtlMs);
      this.cache.store({ path: routePath, cell: cell.name, exact, source: answer.source }, ttlMs);
      ctx.log?.debug({ path, asked: asked.name, answer }, 'route learned');
      return { cell, via: 'learn', source: answer.source };
    } catch (err) {
      this.metrics.fallbacks++;
      (ctx.log ?? this.log).warn(
        { path, asked: asked.name, err, legacy: this.cells.legacy.name },
        'learn failed, routing to the legacy cell',
      );
      return { cell: this.cells.legacy, via: 'fallback', source: 'fallback' };
    }
  }
}

/**
 * True when prefix route `routePath` (`/a`) covers `path` (`/a`, `/a/…`), whole segments only
 * (`/john` does not cover `/john.doe`). A prefix of `/` would send every path to one cell for its
 * whole TTL: such an answer covers nothing beyond the asked path.
 */
function covered(path: string, routePath: string): boolean {
  const prefix = routePath.replace(/\/+$/, '');
  return prefix !== '' && (path === prefix || path.startsWith(`${prefix}/`));
}
