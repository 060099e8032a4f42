// Header policy of each hop the bridge makes (pre-authorization, pass-back, proxy), on the shared
// hygiene of lib/http-headers.ts (hop-by-hop list, `Connection`-named headers, `X-Forwarded-For`).
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { appendForwardedFor, endToEndHeaders, headerValue } from '../lib/http-headers.js';

/** Not copied from the client to the pre-authorization request (as Workhorse). */
const PREAUTH_DROPPED = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'content-disposition',
  'accept-encoding',
]);

/** Not copied from a refused pre-authorization back to the client (as Workhorse). */
const PASSBACK_DROPPED = new Set(['gitlab-workhorse-send-data', 'gitlab-sv', 'gitlab-lb', 'content-length']);

export const CORRELATION_HEADER = 'x-request-id';
/** The bridge's own short text answers. */
export const TEXT_PLAIN = { 'content-type': 'text/plain; charset=utf-8' };
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's `X-Request-Id` when it looks sane, otherwise a fresh one. */
export function correlationIdFrom(headers: IncomingHttpHeaders): string {
  const given = headerValue(headers, CORRELATION_HEADER);
  return given && CORRELATION_ID.test(given) ? given : randomUUID();
}

/** HTTP/1.1 `Host`, or HTTP/2 `:authority`. */
export function requestHost(headers: IncomingHttpHeaders): string | undefined {
  return headerValue(headers, 'host') ?? headerValue(headers, ':authority');
}

/** Headers of the pre-authorization request: the client's, cleaned, plus the Workhorse identity. */
export function preauthHeaders(
  client: IncomingHttpHeaders,
  opts: { version: string; workhorseJwt: string; correlationId: string },
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = endToEndHeaders(client, PREAUTH_DROPPED);
  const host = requestHost(client);
  if (host) out.host = host;
  out['gitlab-workhorse'] = opts.version;
  out['gitlab-workhorse-api-request'] = opts.workhorseJwt;
  out[CORRELATION_HEADER] = opts.correlationId;
  return out;
}

/** Headers of Rails' refusal as given back to the client. */
export function passbackHeaders(rails: IncomingHttpHeaders): OutgoingHttpHeaders {
  return endToEndHeaders(rails, PASSBACK_DROPPED);
}

/** Headers of a proxied request: end-to-end ones plus `X-Forwarded-For` (appended) and `X-Forwarded-Proto`. */
export function proxyRequestHeaders(
  client: IncomingHttpHeaders,
  opts: { clientIp: string | undefined; proto: 'http' | 'https'; correlationId: string },
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = endToEndHeaders(client);
  const host = requestHost(client);
  if (host) out.host = host;
  if (opts.clientIp)
    out['x-forwarded-for'] = appendForwardedFor(headerValue(client, 'x-forwarded-for'), opts.clientIp);
  out['x-forwarded-proto'] = headerValue(client, 'x-forwarded-proto') ?? opts.proto;
  out[CORRELATION_HEADER] = opts.correlationId;
  return out;
}

/** Headers of a proxied response, safe for both HTTP/1.1 and HTTP/2 clients. */
export function proxyResponseHeaders(upstream: IncomingHttpHeaders): OutgoingHttpHeaders {
  return endToEndHeaders(upstream);
}
