import { type PathPatternName, ROUTES, type RouteDef } from './routes.js';
import {
  type CompiledSpec,
  type Constraints,
  compileSpec,
  matchSpec,
  normalizePath,
  type SpecMatch,
} from './spec.js';

/**
 * Top-level words a namespace can never be (GitLab's TOP_LEVEL_ROUTES): the first literal segment
 * of every route here plus GitLab routes this mock does not serve. A path under one of them never
 * names a namespace, so `/api/unknown` is an unknown route, not the namespace `api`.
 */
export const RESERVED_TOP_LEVEL: readonly string[] = [
  ...new Set([
    ...ROUTES.map((r) => /^\/([a-z_-]+)(?=\/|\(|$)/.exec(r.spec)?.[1]).filter(
      (w): w is string => w !== undefined,
    ),
    ...['-', 'explore', 'groups', 'help', 'projects', 'search', 'uploads', 'assets', 'oauth', 'jwt', 'v2'],
  ]),
].sort();

const SEGMENT = '[A-Za-z0-9_.][A-Za-z0-9_.-]*?';
const TOP_SEGMENT = `(?!(?:${RESERVED_TOP_LEVEL.map((w) => w.replace(/[-]/g, '\\-')).join('|')})(?:[/.]|$))${SEGMENT}(?<!\\.git)`;

/** GitLab's path constraints (Gitlab::PathRegex), as regex sources. */
export const PATH_PATTERNS = {
  /** A full namespace path: a non-reserved top-level segment, then any nested segments. */
  namespace: `${TOP_SEGMENT}(?:/${SEGMENT}(?<!\\.git))*?`,
  project: `${SEGMENT}(?<!\\.git)`,
  repository: `${SEGMENT}\\.git`,
  segment: SEGMENT,
  version: 'v4',
} as const satisfies Record<PathPatternName, string>;

/** Constraints every route applies by parameter name, as GitLab's routes do. */
const PARAM_CONSTRAINTS: Constraints = {
  namespace_id: PATH_PATTERNS.namespace,
  project_id: PATH_PATTERNS.project,
  repository_path: PATH_PATTERNS.repository,
  organization_path: PATH_PATTERNS.segment,
  version: PATH_PATTERNS.version,
};

export interface CompiledRoute {
  route: RouteDef;
  compiled: CompiledSpec;
}

export const COMPILED_ROUTES: readonly CompiledRoute[] = ROUTES.map((route) => ({
  route,
  compiled: compileSpec(route.spec, {
    ...PARAM_CONSTRAINTS,
    ...Object.fromEntries(Object.entries(route.constraints ?? {}).map(([k, v]) => [k, PATH_PATTERNS[v]])),
  }),
}));

export interface RouteMatch extends SpecMatch {
  route: RouteDef;
  /** The normalized path the route matched. */
  path: string;
  /** The normalized path without the format suffix (`/john.doe.json` → `/john.doe`). */
  canonicalPath: string;
}

/**
 * The first route of `verb` matching the path (HEAD matches GET routes). With `anyVerb`, a path
 * no route of `verb` matches may match a route of another verb (learn classifies paths, whatever
 * the method).
 */
export function matchRoute(
  verb: string,
  pathInfo: string,
  opts: { anyVerb?: boolean } = {},
): RouteMatch | undefined {
  const path = normalizePath(pathInfo);
  const wanted = verb.toUpperCase() === 'HEAD' ? 'GET' : verb.toUpperCase();
  const find = (pred: (r: RouteDef) => boolean) => {
    for (const { route, compiled } of COMPILED_ROUTES) {
      if (!pred(route)) continue;
      const m = matchSpec(compiled, path);
      if (!m) continue;
      const canonicalPath = m.format === undefined ? path : path.slice(0, -(m.format.length + 1));
      return { ...m, route, path, canonicalPath };
    }
    return undefined;
  };
  return find((r) => r.verb === wanted) ?? (opts.anyVerb ? find(() => true) : undefined);
}
