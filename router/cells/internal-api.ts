/**
 * @file Client of GitLab's internal API (`/api/v4/internal/*`) as GitLab Shell calls it, through a
 * cell's bridge: shell JWT in `Gitlab-Shell-Api-Request`, JSON bodies, GitLab Shell's error wording
 * ("Internal API unreachable", "Internal API error (<code>)", or the `message` of the answer). The
 * bodies are the contracts of `lib/contracts/` (`internal-api.ts`, `learn.ts`), which the mock cell
 * produces; every answer is checked field by field before use.
 */
import {
  type AllowedJson,
  type AuthorizedKeyJson,
  CUSTOM_ACTION_STATUS,
  type CustomActionJson,
  type DiscoverJson,
  INTERNAL_API_PREFIX,
  MISDIRECTED_STATUS,
  type ShellAllowedRequestJson,
} from '../../lib/contracts/internal-api.js';
import {
  LEARN_PATH,
  type LearnAnswerJson,
  ROUTE_SOURCES,
  type RouteSource,
} from '../../lib/contracts/learn.js';
import { asObject, type Unchecked } from '../../lib/contracts/unchecked.js';
import { type JwtKey, SHELL_HEADER, signShellJwt } from '../../lib/jwt.js';
import type { Logger } from '../../lib/logger.js';
import { readBodyLimited } from '../../lib/streams.js';
import type { CellConfig } from '../config.js';
import { MisdirectedError, RouterError } from '../errors.js';
import { type GeoCustomAction, parseCustomAction } from '../geo/custom-action.js';
import type { CellDirectory } from './directory.js';
import {
  errorFromAnswer,
  messageOf,
  parseJsonObject,
  type RawAnswer,
  redirectHeader,
  stringOr,
} from './internal-answer.js';
import type { UpstreamCall } from './transport.js';

export interface CallContext {
  requestId: string;
  /** Client IP for `X-Forwarded-For`, as GitLab Shell sends it. */
  remoteIp?: string;
  /** Aborts the call (client gone, shutdown). */
  signal?: AbortSignal;
  log?: Logger;
  /** When the whole lookup must be over (ms since the epoch); each call gets what is left of it. */
  deadline?: number;
}

export interface KeyRecord {
  id: number;
  /** The key as the cell stores it (`ssh-ed25519 AAAA… comment` or just the base64 blob). */
  key: string | undefined;
}

export interface DiscoverAnswer {
  username: string | null;
}

export type AllowedRequest = ShellAllowedRequestJson;

export interface AllowedAnswer {
  glId: string;
  glProjectPath: string;
  glUsername: string | undefined;
  consoleMessages: string[];
}

/**
 * `/allowed` granted, in one of gitlab-shell's two shapes: a `tunnel` to the owning cell (200), or a
 * `custom-action` (300, a Geo secondary handing the command to its primary, `router/geo/`).
 */
export type AllowedResult =
  | ({ kind: 'tunnel' } & AllowedAnswer)
  | { kind: 'custom-action'; custom: GeoCustomAction; consoleMessages: string[] };

/**
 * A checked `LearnAnswerJson`. `source` says how it was decided: `routable` and `fixed` answers
 * name the owner of the path; `fallback` means the path does not decide (the legacy cell is named),
 * so the HTTP front lets its token/session rules choose first.
 */
export interface LearnAnswer extends Pick<LearnAnswerJson, 'path' | 'cell' | 'source'> {
  exact: boolean;
  /** Seconds the answer may be cached (`cache_ttl`); 0 = do not cache. */
  cacheTtl: number;
}

const MAX_ANSWER_BYTES = 1 << 20;

/** `topology` mode: the cell that owns a key, from the key blob (base64), classified by fingerprint. */
export type KeyCellResolver = (blobBase64: string, ctx: CallContext) => Promise<CellConfig>;

export class InternalApi {
  constructor(
    private readonly cells: CellDirectory,
    private readonly jwtKey: JwtKey,
    private readonly timeoutMs: number,
    private readonly keyCell?: KeyCellResolver,
  ) {}

  /**
   * `GET /authorized_keys?key=<blob>`: with a `keyCell` resolver on the cell it names only (gitlab-shell
   * in Cells mode), else on the router's region first; undefined = unknown key.
   */
  async findKey(blobBase64: string, ctx: CallContext): Promise<KeyRecord | undefined> {
    const path = `/authorized_keys?key=${encodeURIComponent(blobBase64)}`;
    const answer = this.keyCell
      ? await this.call(await this.keyCell(blobBase64, ctx), 'GET', path, undefined, ctx)
      : await this.onAnyCell(ctx, (cell, shared) => this.call(cell, 'GET', path, undefined, shared));
    if (answer.status === 404) return undefined;
    const body = parseJsonObject<AuthorizedKeyJson>(answer, 'authorized_keys');
    if (typeof body.id !== 'number' || !Number.isSafeInteger(body.id)) {
      throw RouterError.internalApi('authorized_keys answered without a key id');
    }
    return { id: body.id, key: typeof body.key === 'string' ? body.key : undefined };
  }

  /** `GET /discover?key_id=<id>`: who owns the key (for the welcome message). */
  async discover(keyId: string, ctx: CallContext): Promise<DiscoverAnswer> {
    const answer = await this.onAnyCell(ctx, (cell, shared) =>
      this.call(cell, 'GET', `/discover?key_id=${encodeURIComponent(keyId)}`, undefined, shared),
    );
    // Rails answers `null` for a key it cannot tie to a user: GitLab Shell greets "Anonymous".
    if (answer.status === 200 && answer.text.trim() === 'null') return { username: null };
    const body = parseJsonObject<NonNullable<DiscoverJson>>(answer, 'discover');
    return { username: typeof body.username === 'string' && body.username !== '' ? body.username : null };
  }

  /** `POST /allowed` on the owning cell. Throws the denial, a 421 redirect or an API error. */
  async allowed(cell: CellConfig, req: AllowedRequest, ctx: CallContext): Promise<AllowedResult> {
    const answer = await this.call(cell, 'POST', '/allowed', req, ctx);
    if (answer.status === MISDIRECTED_STATUS) {
      throw new MisdirectedError(messageOf(answer) ?? 'Misdirected Request', redirectHeader(answer.headers));
    }
    const body = parseJsonObject<AllowedJson & CustomActionJson & { message: string }>(answer, 'allowed');
    if (body.status !== true) {
      throw RouterError.accessDenied(typeof body.message === 'string' ? body.message : 'Access denied');
    }
    const messages = Array.isArray(body.gl_console_messages)
      ? body.gl_console_messages.filter((m): m is string => typeof m === 'string')
      : [];
    if (answer.status === CUSTOM_ACTION_STATUS) {
      return { kind: 'custom-action', custom: parseCustomAction(body.payload), consoleMessages: messages };
    }
    const gitaly = asObject<AllowedJson['gitaly']>(body.gitaly);
    const repository = asObject<AllowedJson['gitaly']['repository']>(gitaly?.repository);
    const glProjectPath = stringOr(repository?.gl_project_path) ?? stringOr(body.gl_project_path);
    if (!glProjectPath)
      throw RouterError.cellsRouting('cells routing: missing gl_project_path in /allowed response');
    const glId = stringOr(body.gl_id);
    if (!glId) throw RouterError.cellsRouting('cells routing: missing gl_id in /allowed response');
    return {
      kind: 'tunnel',
      glId,
      glProjectPath,
      glUsername: stringOr(body.gl_username),
      consoleMessages: messages,
    };
  }

  /** `GET /cells/learn?method=&path_info=` on the given cell. */
  async learn(cell: CellConfig, method: string, pathInfo: string, ctx: CallContext): Promise<LearnAnswer> {
    const query = `method=${encodeURIComponent(method)}&path_info=${encodeURIComponent(pathInfo)}`;
    const answer = await this.call(cell, 'GET', `${LEARN_PATH}?${query}`, undefined, ctx);
    const body = parseJsonObject<LearnAnswerJson>(answer, 'cells/learn');
    const ttl = body.cache_ttl;
    if (typeof body.path !== 'string' || !body.path.startsWith('/') || typeof body.cell !== 'string') {
      throw RouterError.internalApi('cells/learn answered without path or cell');
    }
    const source = body.source;
    if (!ROUTE_SOURCES.includes(source as RouteSource)) {
      throw RouterError.internalApi(
        `cells/learn answered source ${JSON.stringify(source)}, not one of ${ROUTE_SOURCES.join(', ')}`,
      );
    }
    return {
      path: body.path,
      cell: body.cell,
      source: source as RouteSource,
      exact: body.exact === true,
      cacheTtl: typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? ttl : 0,
    };
  }

  /** `POST <path>` of the account endpoints (`lib/contracts/account-api.ts`) on the user's cell. */
  async post<T>(cell: CellConfig, path: string, body: object, ctx: CallContext): Promise<Unchecked<T>> {
    return parseJsonObject<T>(await this.call(cell, 'POST', path, body, ctx), path.slice(1));
  }

  /**
   * Tries cells in preference order until one gives a definitive answer (any status below 500);
   * users and keys are shared by all cells, so any cell may answer. All the tries share one
   * `internalApiTimeoutMs`: a cell that fails fast leaves the rest of it to the next, a slow one does
   * not make the user wait once per cell.
   */
  private async onAnyCell(
    ctx: CallContext,
    fn: (cell: CellConfig, ctx: CallContext) => Promise<RawAnswer>,
  ): Promise<RawAnswer> {
    let lastError: unknown;
    const shared = { ...ctx, deadline: Date.now() + this.timeoutMs };
    for (const cell of this.cells.preferenceOrder()) {
      if (ctx.signal?.aborted || (lastError !== undefined && Date.now() >= shared.deadline)) break;
      try {
        const answer = await fn(cell, shared);
        if (answer.status < 500) return answer;
        lastError = errorFromAnswer(answer);
      } catch (err) {
        lastError = err;
      }
      ctx.log?.warn({ cell: cell.name, err: lastError }, 'internal API call failed, trying another cell');
    }
    throw lastError ?? RouterError.cancelled('cancelled');
  }

  private async call(
    cell: CellConfig,
    method: 'GET' | 'POST',
    path: string,
    body: object | undefined,
    ctx: CallContext,
  ): Promise<RawAnswer> {
    const headers: Record<string, string> = {
      [SHELL_HEADER]: await signShellJwt(this.jwtKey),
      'user-agent': 'gitlab-cells-router',
      'x-request-id': ctx.requestId,
    };
    if (ctx.remoteIp) headers['x-forwarded-for'] = ctx.remoteIp;
    if (body) headers['content-type'] = 'application/json';
    if (ctx.signal?.aborted) throw RouterError.cancelled('cancelled');
    let call: UpstreamCall | undefined;
    let timedOut = false;
    const abort = () => call?.cancel();
    const timeoutMs = ctx.deadline === undefined ? this.timeoutMs : Math.max(1, ctx.deadline - Date.now());
    const timer = setTimeout(
      () => {
        timedOut = true;
        abort();
      },
      Math.min(this.timeoutMs, timeoutMs),
    );
    ctx.signal?.addEventListener('abort', abort, { once: true });
    try {
      call = await this.cells
        .transport(cell)
        .open({ method, path: `${INTERNAL_API_PREFIX}${path}`, headers, streamBody: body !== undefined });
      if (body) call.body.end(JSON.stringify(body));
      const res = await call.response;
      // An answer over the limit is cut there (and then fails to parse as JSON).
      const text = (await readBodyLimited(res.body, MAX_ANSWER_BYTES)).body.toString('utf8');
      return { status: res.status, headers: res.headers, text };
    } catch (err) {
      if (ctx.signal?.aborted) throw RouterError.cancelled('cancelled', err);
      // Cancelling the call reads as "socket hang up": the log says what happened instead.
      const cause = timedOut ? new Error(`no answer in time (internalApiTimeoutMs ${this.timeoutMs})`) : err;
      throw RouterError.internalApiUnreachable('Internal API unreachable', cause);
    } finally {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', abort);
    }
  }
}
