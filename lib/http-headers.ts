/**
 * @file Header hygiene for every proxy hop (router HTTP front, router → cell transport, bridge): one
 * hop-by-hop list, the headers a `Connection` header names, `X-Forwarded-For`. The behaviour is the
 * bridge's (`bridge/headers.ts`), which Workhorse's `proxy` package matches.
 */

/** Header maps as Node gives them (`IncomingHttpHeaders`) or as we build them (`Record<string, string>`). */
export type HeaderMap<V extends string | string[] = string | string[]> = Readonly<
  Record<string, V | undefined>
>;

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1, plus `keep-alive`, `proxy-connection` and HTTP/2's
 * `http2-settings`): they describe one connection and are never forwarded.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** The first value of a header (Node joins most repeated headers, but not all). */
export function headerValue(headers: HeaderMap, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The header names a `Connection` header lists (`Connection: close, x-trace` → `x-trace`, …), lower case. */
export function connectionNamed(headers: HeaderMap): Set<string> {
  return new Set(
    (headerValue(headers, 'connection') ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * The end-to-end headers of `headers` (names lower-cased): without hop-by-hop ones, those named in
 * `Connection`, HTTP/2 pseudo-headers (`:path`, …) and the names in `extra`.
 */
export function endToEndHeaders<V extends string | string[]>(
  headers: HeaderMap<V>,
  extra: ReadonlySet<string> = new Set(),
): Record<string, V> {
  const named = connectionNamed(headers);
  const out: Record<string, V> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (
      value === undefined ||
      key.startsWith(':') ||
      HOP_BY_HOP.has(key) ||
      named.has(key) ||
      extra.has(key)
    ) {
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** `X-Forwarded-For` for the next hop: `prior, clientIp`, or `clientIp` alone when nothing came before. */
export function appendForwardedFor(prior: string | undefined, clientIp: string): string {
  return prior ? `${prior}, ${clientIp}` : clientIp;
}

/** The original client as the first hop of `X-Forwarded-For` says, if it says. */
export function forwardedClient(headers: HeaderMap): string | undefined {
  return headerValue(headers, 'x-forwarded-for')?.split(',')[0]?.trim() || undefined;
}
