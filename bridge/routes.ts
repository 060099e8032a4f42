import type { GitService } from '../lib/gitaly/index.js';
import type { Logger } from '../lib/logger.js';
import type { Outcome } from '../lib/outcome.js';
import type { Exchange } from './exchange.js';

/** Stable route ids, as Workhorse's route table names them: access-log fields and metric labels. */
export type RouteId = 'ssh_upload_pack' | 'ssh_receive_pack' | 'ssh_upload_archive' | 'health' | 'proxy';

/** Who answers the route: Gitaly (tunnels), the bridge itself, or the cell's Rails. */
export type BackendId = 'gitaly' | 'self' | 'rails';

/** Per-route options, as Workhorse's `withBodyLimit` and `withGeoProxy`. */
export interface RouteOptions {
  /** Request body limit in bytes, after unframing (0 or absent = unlimited); over it, the tunnel ends in-band. */
  readonly bodyLimit?: number;
  /** A request with `Authorization: GL-Geo …` and no shell token is left to Rails to judge. */
  readonly allowGeo?: boolean;
}

/** What `observe` hands a handler: the route, what its pattern captured, and the request's log. */
export interface RouteRequest {
  readonly route: Route;
  /** Named groups of the pattern, e.g. `project` of a tunnel. */
  readonly params: Readonly<Record<string, string>>;
  /** The request path, query removed. */
  readonly path: string;
  /** The client's `X-Request-Id` when sane, else a fresh one; echoed and sent on. */
  readonly correlationId: string;
  /** Bound to the correlation id, route, backend, protocol, method, path and params. */
  readonly log: Logger;
}

/** What a handler reports once its exchange is over: the access line's outcome, status and fields. */
export interface Served {
  outcome: Outcome;
  /** The HTTP status answered; absent when the client left before any answer. */
  status?: number;
  /** More access-line fields (`gl_id`, `bytes_in`, `error_code`, `err`…); undefined ones are left out. */
  fields?: Record<string, unknown>;
}

/** Answers one exchange and resolves when it is over; `observe` writes the access line and the metrics. */
export type RouteHandler = (ex: Exchange, req: RouteRequest) => Promise<Served>;

export interface Route {
  /** Methods this row answers, or `any`. */
  readonly methods: readonly string[] | 'any';
  /** Matched against the request path (query removed), like Workhorse's `^/.+\.git/ssh-upload-pack\z`. */
  readonly pattern: RegExp;
  readonly id: RouteId;
  readonly backend: BackendId;
  readonly handler: RouteHandler;
  readonly options: RouteOptions;
}

/** The handlers the table is built from (bound to their dependencies by `app.ts`). */
export interface RouteHandlers {
  tunnel(service: GitService): RouteHandler;
  health: RouteHandler;
  proxy: RouteHandler;
}

/** A repository path: `/<project>.git/<suffix>`, the project captured. */
const repoPath = (suffix: string) => new RegExp(`^/(?<project>.+)\\.git/${suffix}$`);
const POST = ['POST'];

/**
 * Every route of the bridge, first match wins (Workhorse's `configureRoutes`). Smart-HTTP git
 * (`info/refs`, `git-upload-pack`, `git-receive-pack`) would be three more `gitaly` rows here.
 */
export function routeTable(h: RouteHandlers, limits: { maxReceivePackBytes: number }): readonly Route[] {
  const geo = { allowGeo: true };
  const receivePack = { ...geo, bodyLimit: limits.maxReceivePackBytes };
  return [
    row(POST, repoPath('ssh-upload-pack'), 'ssh_upload_pack', 'gitaly', h.tunnel('upload-pack'), geo),
    row(
      POST,
      repoPath('ssh-receive-pack'),
      'ssh_receive_pack',
      'gitaly',
      h.tunnel('receive-pack'),
      receivePack,
    ),
    row(
      POST,
      repoPath('ssh-upload-archive'),
      'ssh_upload_archive',
      'gitaly',
      h.tunnel('upload-archive'),
      geo,
    ),
    row(['GET', 'HEAD'], /^\/-\/bridge\/health$/, 'health', 'self', h.health),
    // Everything else, `/api/v4/internal/*` included, goes to Rails unchanged.
    row('any', /^/, 'proxy', 'rails', h.proxy),
  ];
}

function row(
  methods: Route['methods'],
  pattern: RegExp,
  id: RouteId,
  backend: BackendId,
  handler: RouteHandler,
  options: RouteOptions = {},
): Route {
  return { methods, pattern, id, backend, handler, options };
}

export interface RouteMatch {
  route: Route;
  path: string;
  params: Readonly<Record<string, string>>;
}

/** The first row whose method and pattern match, with the path and the pattern's named groups. */
export function matchRoute(
  table: readonly Route[],
  method: string | undefined,
  url: string | undefined,
): RouteMatch | undefined {
  const target = url ?? '/';
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  for (const route of table) {
    if (route.methods !== 'any' && !route.methods.includes(method ?? '')) continue;
    const m = route.pattern.exec(path);
    if (m) return { route, path, params: { ...m.groups } };
  }
  return undefined;
}
