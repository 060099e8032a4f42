import type { TopologyModel } from './topology.js';

/**
 * Answers of `GET /api/v4/internal/cells/learn` (contracts.md "Learn answers"): which cell owns a
 * path, under which prefix the router may cache that, and for how long. Every cell answers for every
 * path: routes are shared.
 */
export interface LearnAnswer {
  path: string;
  cell: string;
  source: 'routable' | 'fixed' | 'fallback';
  exact?: true;
  cache_ttl: number;
}

export const CACHE_TTL = { routable: 300, fixed: 3600, fallback: 60 } as const;

/**
 * Splits a path into segments: drops the query, empty segments, and everything from the first
 * segment ending in `.git` on (`/ns/p.git/info/refs` → `ns`, `p`).
 */
export function pathSegments(pathInfo: string): string[] {
  const segments = (pathInfo.split(/[?#]/)[0] ?? '').split('/').filter((s) => s !== '');
  const gitAt = segments.findIndex((s) => s.endsWith('.git') && s.length > 4);
  if (gitAt === -1) return segments;
  return [...segments.slice(0, gitAt), (segments[gitAt] as string).slice(0, -4)];
}

function fixedRoute(model: TopologyModel, path: string): LearnAnswer | undefined {
  const candidates = model
    .fixedRoutes()
    .filter((r) => (r.exact ? path === r.path : path === r.path || path.startsWith(`${r.path}/`)))
    .sort((a, b) => b.path.length - a.path.length || Number(b.exact === true) - Number(a.exact === true));
  const route = candidates[0];
  if (!route) return undefined;
  return {
    path: route.path,
    cell: route.cell,
    source: 'fixed',
    ...(route.exact ? { exact: true as const } : {}),
    cache_ttl: CACHE_TTL.fixed,
  };
}

function routable(path: string, cell: string): LearnAnswer {
  return { path, cell, source: 'routable', cache_ttl: CACHE_TTL.routable };
}

/**
 * Unknown paths go to the legacy cell. The answer covers the smallest prefix that names the unknown
 * entity (`/<segment>` or `/organizations/<org>`); the root and `/-/…` paths are answered exactly so
 * they never shadow other routes.
 */
function fallback(model: TopologyModel, segments: string[]): LearnAnswer {
  const cell = model.legacyCell().name;
  const base = { cell, source: 'fallback' as const, cache_ttl: CACHE_TTL.fallback };
  const [first, second] = segments;
  if (first === undefined || first === '-') return { path: `/${segments.join('/')}`, exact: true, ...base };
  if (first === 'organizations' && second !== undefined) return { path: `/organizations/${second}`, ...base };
  return { path: `/${first}`, ...base };
}

export function learn(model: TopologyModel, pathInfo: string): LearnAnswer {
  const segments = pathSegments(pathInfo);
  const path = `/${segments.join('/')}`;
  const fixed = fixedRoute(model, path);
  if (fixed) return fixed;
  const [first, second] = segments;
  if (first === 'organizations' && second !== undefined) {
    const org = model.organization(second);
    if (org) return routable(`/organizations/${org.path}`, org.cell);
  } else if (first !== undefined) {
    const ns = model.namespace(first);
    if (ns) return routable(`/${ns.path}`, model.cellOfNamespace(ns).name);
  }
  return fallback(model, segments);
}
