/**
 * @file `GET /api/v4/internal/cells/learn?method=<verb>&path_info=<path>`: which cell owns a path, under
 * which prefix and for how long the router may cache that (docs/contracts.md "Learn answers").
 */

/** How the answer was decided: `routable`/`fixed` name the owner; `fallback` means the path does not decide. */
export const ROUTE_SOURCES = ['routable', 'fixed', 'fallback'] as const;
export type RouteSource = (typeof ROUTE_SOURCES)[number];

/** The path of the learn endpoint under `INTERNAL_API_PREFIX`. */
export const LEARN_PATH = '/cells/learn';

/** The learn answer (200, JSON). */
export interface LearnAnswerJson {
  /** What the answer covers: a prefix (`path/…` too) unless `exact`; may differ from the asked path. */
  path: string;
  /** A cell name. */
  cell: string;
  source: RouteSource;
  /** Present (true) when the answer covers `path` only. */
  exact?: true;
  /** Seconds the router may cache the answer; 0 = do not cache. */
  cache_ttl: number;
}
