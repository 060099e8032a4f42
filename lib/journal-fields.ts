/**
 * @file What a journal entry (`lib/contracts/world.ts`) may say about a request: the routing-relevant
 * headers with every secret redacted, and the claims of the JWTs it carried, decoded but not trusted
 * (the signature is not checked here; the service that answers checks it).
 */
import type { JournalDraft } from './contracts/world.js';

export const REDACTED = '[redacted]';

/** Headers whose value is a secret: kept in the journal as `[redacted]`. */
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'private-token',
  'job-token',
  'deploy-token',
  'runner-token',
  'x-gitlab-token',
  'gitaly-token',
  'geo-authorization',
]);

/** Headers whose value is a JWT: their claims go to `jwt`, the value itself is redacted. */
export const JWT_HEADERS: readonly string[] = ['gitlab-shell-api-request', 'gitlab-workhorse-api-request'];

type HeaderSource = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The headers of `names` (lower-case) present on the request, secrets and JWTs redacted, repeated
 * values joined with `, `.
 */
export function journalHeaders(headers: HeaderSource, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    out[name] = SECRET_HEADERS.has(name) || JWT_HEADERS.includes(name) ? REDACTED : value;
  }
  return out;
}

/** The payload of a compact JWS (`header.payload.signature`), or undefined when it is not one. */
export function decodeJwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  if (token === undefined) return undefined;
  const parts = token
    .trim()
    .replace(/^Bearer\s+/i, '')
    .split('.');
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `jwt` of a journal entry: the decoded claims of each JWT header present (absent when none). */
export function journalJwts(headers: HeaderSource): JournalDraft['jwt'] {
  const out: Record<string, Record<string, unknown>> = {};
  for (const name of JWT_HEADERS) {
    const raw = headers[name];
    const claims = decodeJwtClaims(Array.isArray(raw) ? raw[0] : raw);
    if (claims) out[name] = claims;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Query parameters with the secret ones (`private_token`, `access_token`, tokens, passwords) redacted. */
export function journalQuery(search: URLSearchParams): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [k, v] of search) out[k] = /token|password|secret/i.test(k) ? REDACTED : v;
  return Object.keys(out).length > 0 ? out : undefined;
}
