import type { FastifyRequest } from 'fastify';
import type { CellContext } from '../context.js';
import { SESSION_COOKIE, type Session } from '../sessions.js';
import { isExpired, type PatScope, type PersonalAccessToken } from '../tokens.js';
import type { TopologyUser } from '../topology-types.js';

/**
 * Who is making a page or API request: a personal access token (`Private-Token` or
 * `Authorization: Bearer`), else the session cookie. A session of another cell is `foreign`: the
 * user signed in, but this cell does not honour that session (the router should have sent the
 * request to the session's cell).
 */
export type Visitor =
  | { kind: 'anonymous' }
  | { kind: 'user'; user: TopologyUser; via: 'session'; session: Session }
  | { kind: 'user'; user: TopologyUser; via: 'token'; pat: PersonalAccessToken }
  /** A `glcbt-` CI job token of this cell (`JOB-TOKEN` header or `job_token`), where the endpoint admits one. */
  | { kind: 'user'; user: TopologyUser; via: 'job-token' }
  | { kind: 'foreign'; session: Session }
  /** A token was sent but is unknown, expired or not a personal access token. */
  | { kind: 'bad-token' };

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The personal access token of the request, if it sends one. */
function requestToken(req: FastifyRequest): string | undefined {
  const privateToken = header(req, 'private-token');
  if (privateToken) return privateToken.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(req, 'authorization') ?? '');
  return bearer?.[1];
}

/** The value of one cookie of the request (first occurrence). */
export function cookie(req: FastifyRequest, name: string): string | undefined {
  for (const pair of (header(req, 'cookie') ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The CI job token of the request, if it sends one (`JOB-TOKEN` header, else `job_token` parameter). */
function jobToken(req: FastifyRequest): string | undefined {
  const query = (req.query as Record<string, unknown> | undefined)?.job_token;
  return header(req, 'job-token')?.trim() ?? (typeof query === 'string' ? query : undefined);
}

/**
 * The visitor of a request; pages pass `tokens: false` (GitLab's web UI ignores access tokens), and
 * only the endpoints GitLab opens to CI jobs pass `jobToken: true`.
 */
export function visitor(
  req: FastifyRequest,
  ctx: CellContext,
  opts: { tokens: boolean; jobToken?: boolean } = { tokens: true },
): Visitor {
  const job = opts.jobToken === true ? jobToken(req) : undefined;
  if (job !== undefined) {
    const user = ctx.jobTokens.userOf(job, ctx.cellId);
    return user ? { kind: 'user', user, via: 'job-token' } : { kind: 'bad-token' };
  }
  const token = opts.tokens ? requestToken(req) : undefined;
  if (token !== undefined) {
    const record = ctx.tokens.lookup(token);
    const user = record?.kind === 'pat' && !isExpired(record) ? ctx.model.userById(record.userId) : undefined;
    return user && record?.kind === 'pat'
      ? { kind: 'user', user, via: 'token', pat: record }
      : { kind: 'bad-token' };
  }
  const sid = cookie(req, SESSION_COOKIE);
  const session = sid === undefined ? undefined : ctx.sessions.get(sid);
  if (!session) return { kind: 'anonymous' };
  if (session.cellId !== ctx.cellId) return { kind: 'foreign', session };
  const user = ctx.model.userById(session.userId);
  return user ? { kind: 'user', user, via: 'session', session } : { kind: 'anonymous' };
}

/** A session always has every scope; a token has the scopes it was created with. */
export function hasScope(v: Visitor, scopes: readonly PatScope[]): boolean {
  if (v.kind !== 'user') return false;
  // A job token reaches only the endpoints that admit one, which need no more.
  if (v.via !== 'token') return true;
  return v.pat.scopes.some((s) => scopes.includes(s));
}
