/**
 * @file Answers of `GET /api/v4/internal/cells/learn` (the `LearnAnswerJson` contract of
 * `lib/contracts/learn.ts`): which cell owns a path, under which prefix the router may cache that, and
 * for how long. Every cell answers for every path: routes are shared. The path is decoded as Rails
 * decodes it (route table, dotted names, one format suffix where the route accepts one); topology fixed
 * routes win over the route table.
 */
import type { LearnAnswerJson } from '../lib/contracts/learn.js';
import { normalizePath } from './routing/spec.js';
import { matchRoute, type RouteMatch } from './routing/table.js';
import type { TopologyModel } from './topology.js';
import type { TopologyProject } from './topology-types.js';

export const CACHE_TTL = {
  routable: 300,
  fixed: 3600,
  /** Unknown routes and unknown entities, sent to the legacy cell. */
  fallback: 60,
  /** Routes whose cell depends on the session or token, not on the path. */
  session: 0,
} as const;

function fixedRoute(model: TopologyModel, path: string): LearnAnswerJson | undefined {
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

const routable = (path: string, cell: string): LearnAnswerJson => ({
  path,
  cell,
  source: 'routable',
  cache_ttl: CACHE_TTL.routable,
});

/** The path does not decide the cell: the legacy cell answers. */
function fallback(model: TopologyModel, path: string, exact: boolean, ttl: number): LearnAnswerJson {
  return {
    path,
    cell: model.legacyCell().name,
    source: 'fallback',
    ...(exact ? { exact: true as const } : {}),
    cache_ttl: ttl,
  };
}

/** The project an API `:id` names: a numeric id or a full path (`my-company%2Fmy-project`). */
export function projectByApiId(model: TopologyModel, id: string): TopologyProject | undefined {
  return /^\d+$/.test(id) ? model.projectById(Number(id)) : model.projectByPath(id);
}

/** Answer for a path a route owns through one of its parameters. */
function byOwner(model: TopologyModel, m: RouteMatch): LearnAnswerJson {
  const owner = m.route.owner;
  switch (owner.by) {
    case 'legacy':
      return {
        path: m.canonicalPath,
        cell: model.legacyCell().name,
        source: 'fixed',
        cache_ttl: CACHE_TTL.fixed,
      };
    case 'session':
      return fallback(model, m.canonicalPath, true, CACHE_TTL.session);
    case 'namespace':
    case 'organization':
    case 'project': {
      const [start, end] = m.offsets[owner.param] as readonly [number, number];
      const before = m.path.slice(0, start);
      const value = m.params[owner.param] as string;
      if (owner.by === 'project') {
        const project = projectByApiId(model, value);
        const prefix = m.path.slice(0, end);
        return project
          ? routable(prefix, model.cellOfProject(project).name)
          : fallback(model, prefix, false, CACHE_TTL.fallback);
      }
      if (owner.by === 'organization') {
        const org = model.organization(value);
        return org
          ? routable(`${before}${org.path}`, org.cell)
          : fallback(model, `${before}${m.raw[owner.param]}`, false, CACHE_TTL.fallback);
      }
      const top = value.split('/')[0] as string;
      const ns = model.namespace(top);
      return ns
        ? routable(`${before}${ns.path}`, model.cellOfNamespace(ns).name)
        : fallback(
            model,
            `${before}${(m.raw[owner.param] as string).split('/')[0]}`,
            false,
            CACHE_TTL.fallback,
          );
    }
  }
}

/** Which cell owns `pathInfo` for `method` (routes of other methods count when none of it matches). */
export function learn(model: TopologyModel, pathInfo: string, method = 'GET'): LearnAnswerJson {
  const match = matchRoute(method, pathInfo, { anyVerb: true });
  const path = match ? match.canonicalPath : normalizePath(pathInfo);
  const fixed = fixedRoute(model, path);
  if (fixed) return fixed;
  if (!match) return fallback(model, path, true, CACHE_TTL.fallback);
  return byOwner(model, match);
}
