import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { journalHeaders, journalJwts, journalQuery } from '../../lib/journal-fields.js';

/**
 * One journal entry per request a cell receives (`lib/contracts/world.ts`): path, method, query,
 * the routing-relevant headers (secrets redacted, JWT claims decoded), the routing fields of the
 * body (never a password or token), status, duration and the bytes on the wire.
 */

const HEADERS = [
  'gitlab-shell-api-request',
  'gitlab-workhorse-api-request',
  'git-protocol',
  'x-forwarded-for',
  'x-forwarded-host',
  'user-agent',
  'content-type',
  'authorization',
  'cookie',
  'private-token',
  'job-token',
  'runner-token',
] as const;
/** Header name prefixes kept whole: the HTTP Router's rule headers and Geo's. */
const HEADER_PREFIXES = ['x-gitlab-http-router-', 'x-gitlab-geo', 'gitlab-geo'];

/** Body fields that say where a request goes and what it does. */
const FIELDS = [
  'action',
  'project',
  'gl_repository',
  'key_id',
  'user_id',
  'username',
  'protocol',
  'changes',
  'check_ip',
  'operation',
  'identifier',
  'path_info',
  'namespace_path',
  'name',
  'scopes',
  'cell',
  'organization_id',
  'maintenance_reason',
  'runner_type',
  'group_id',
  'project_id',
] as const;
const CHANGES_LIMIT = 512;

export function journalHeaderNames(headers: FastifyRequest['headers']): string[] {
  const extra = Object.keys(headers).filter((h) => HEADER_PREFIXES.some((p) => h.startsWith(p)));
  return [...HEADERS, ...extra];
}

export function journalBodyFields(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body))
    return undefined;
  const b = body as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of FIELDS) {
    const v = b[name];
    if (v === undefined) continue;
    out[name] =
      name === 'changes' && typeof v === 'string' && v.length > CHANGES_LIMIT
        ? `${v.slice(0, CHANGES_LIMIT)}…`
        : v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

interface Start {
  at: Date;
  hr: bigint;
  read: number;
  written: number;
}

const starts = new WeakMap<object, Start>();
const fired = new WeakMap<object, Record<string, unknown>>();

export function markStart(req: FastifyRequest): void {
  const s = req.raw.socket;
  starts.set(req.raw, {
    at: new Date(),
    hr: process.hrtime.bigint(),
    read: s?.bytesRead ?? 0,
    written: s?.bytesWritten ?? 0,
  });
}

/** Notes the fault that decided a request, for its entry. */
export function markFault(req: FastifyRequest, fault: Record<string, unknown>): void {
  fired.set(req.raw, fault);
}

/** The body's length: `Content-Length`, else what the socket read while the request ran (chunked bodies). */
function bytesIn(req: FastifyRequest, start: Start): number {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > 0) return declared;
  return Math.max(0, (req.raw.socket?.bytesRead ?? start.read) - start.read);
}

/** What the answer put on the wire (head and body), at least its `Content-Length`. */
function bytesOut(req: FastifyRequest, reply: FastifyReply | undefined, start: Start): number {
  const written = Math.max(0, (req.raw.socket?.bytesWritten ?? start.written) - start.written);
  const declared = Number(reply?.getHeader('content-length'));
  return Math.max(written, Number.isFinite(declared) ? declared : 0);
}

export interface EntryContext {
  cell: string;
  site?: string | undefined;
}

/** The entry of a finished (or reset) request; `status` overrides the reply's for a reset. */
export function journalEntry(
  ctx: EntryContext,
  req: FastifyRequest,
  reply: FastifyReply | undefined,
  status?: number | string,
): JournalDraft {
  const start = starts.get(req.raw) ?? { at: new Date(), hr: process.hrtime.bigint(), read: 0, written: 0 };
  const url = new URL(req.url, 'http://cell.invalid');
  const entry: JournalDraft = {
    time: start.at.toISOString(),
    cell: ctx.cell,
    service: 'rails',
    endpoint: url.pathname,
    method: req.method,
    status: status ?? reply?.statusCode ?? 0,
    durationMs: Number(process.hrtime.bigint() - start.hr) / 1e6,
    bytesIn: bytesIn(req, start),
    bytesOut: bytesOut(req, reply, start),
  };
  if (ctx.site !== undefined) entry.site = ctx.site;
  const query = journalQuery(url.searchParams);
  if (query) entry.query = query;
  const headers = journalHeaders(req.headers, journalHeaderNames(req.headers));
  if (Object.keys(headers).length > 0) entry.headers = headers;
  const jwt = journalJwts(req.headers);
  if (jwt) entry.jwt = jwt;
  const fields = journalBodyFields(req.body);
  if (fields) entry.fields = fields;
  const fault = fired.get(req.raw);
  if (fault) entry.fault = fault;
  return entry;
}
