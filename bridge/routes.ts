import type { GitService } from '../lib/gitaly/index.js';
import type { Logger } from '../lib/logger.js';
import type { Outcome } from '../lib/outcome.js';
import type { Exchange } from './exchange.js';

/** Stable route ids, as Workhorse's route table names them: access-log fields and metric labels. */
export type RouteId =
  | 'git_info_refs'
  | 'git_upload_pack'
  | 'git_receive_pack'
  | 'git_lfs_objects'
  | 'ssh_upload_pack'
  | 'ssh_receive_pack'
  | 'ssh_upload_archive'
  | 'health'
  | 'proxy';

/** Who answers the route: Gitaly (tunnels), the bridge itself, or the cell's Rails. */
export type BackendId = 'gitaly' | 'self' | 'rails';

/** Per-route options, as Workhorse's `withBodyLimit` and `withGeoProxy`. */
export interface RouteOptions {
  /** Request body limit in bytes, after unframing (0 or absent = unlimited); over it, the tunnel ends in-band. */
  readonly bodyLimit?: number;
  /** A request with `Authorization: GL-Geo …` and no shell token is left to Rails to judge. */
  readonly allowGeo?: boolean;
  /** The row matches only this media type (parameters ignored), as Workhorse's `withMatcher(isContentType)`. */
  readonly contentType?: string;
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
  /** Smart HTTP git (`bridge/git-http/`); absent: those paths go to Rails like any other. */
  gitHttp?: {
    infoRefs: RouteHandler;
    uploadPack: RouteHandler;
    receivePack: RouteHandler;
    lfsUpload?: RouteHandler;
  };
}

/** A repository path: `/<project>.git/<suffix>`, the project captured. */
const repoPath = (suffix: string) => new RegExp(`^/(?<project>.+)\\.git/${suffix}$`);
const POST = ['POST'];

function gitHttpRows(h: RouteHandlers): Route[] {
  if (!h.gitHttp) return [];
  const g = h.gitHttp;
  const type = (contentType: string) => ({ contentType });
  return [
    row(['GET'], repoPath('info/refs'), 'git_info_refs', 'gitaly', g.infoRefs),
    row(
      POST,
      repoPath('git-upload-pack'),
      'git_upload_pack',
      'gitaly',
      g.uploadPack,
      type(UPLOAD_PACK_REQUEST),
    ),
    row(
      POST,
      repoPath('git-receive-pack'),
      'git_receive_pack',
      'gitaly',
      g.receivePack,
      type(RECEIVE_PACK_REQUEST),
    ),
  ];
}

/** `PUT …/gitlab-lfs/objects/<oid>/<size>` (Workhorse's `git_lfs_objects`, Rails-backed upload). */
function lfsRows(h: RouteHandlers): Route[] {
  const upload = h.gitHttp?.lfsUpload;
  if (!upload) return [];
  const pattern = /^\/(?<project>.+)\.git\/gitlab-lfs\/objects\/(?<oid>[0-9a-f]{64})\/(?<size>[0-9]+)$/;
  return [
    row(['PUT'], pattern, 'git_lfs_objects', 'rails', upload, { contentType: 'application/octet-stream' }),
  ];
}

export const UPLOAD_PACK_REQUEST = 'application/x-git-upload-pack-request';
export const RECEIVE_PACK_REQUEST = 'application/x-git-receive-pack-request';

/**
 * Every route of the bridge, first match wins (Workhorse's `configureRoutes`): smart HTTP git
 * (`info/refs`, `git-upload-pack`, `git-receive-pack`), the SSH tunnels, health, then Rails.
 */
export function routeTable(h: RouteHandlers, limits: { maxReceivePackBytes: number }): readonly Route[] {
  const geo = { allowGeo: true };
  const receivePack = { ...geo, bodyLimit: limits.maxReceivePackBytes };
  return [
    ...gitHttpRows(h),
    ...lfsRows(h),
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
/** The media type of a `Content-Type` value, parameters dropped (Go's `mime.ParseMediaType`). */
function mediaType(value: string | undefined): string | undefined {
  const type = value?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

export function matchRoute(
  table: readonly Route[],
  method: string | undefined,
  url: string | undefined,
  contentType?: string,
): RouteMatch | undefined {
  const target = url ?? '/';
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  for (const route of table) {
    if (route.methods !== 'any' && !route.methods.includes(method ?? '')) continue;
    if (route.options.contentType !== undefined && mediaType(contentType) !== route.options.contentType)
      continue;
    const m = route.pattern.exec(path);
    if (m) return { route, path, params: { ...m.groups } };
  }
  return undefined;
}
