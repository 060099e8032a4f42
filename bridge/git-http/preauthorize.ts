import type http from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import type https from 'node:https';
import type { AppError } from '../../lib/errors.js';
import { GitalyAddressError, type GitalyConnection, type GitalyConnections } from '../../lib/gitaly/index.js';
import { type JwtKey, signWorkhorseJwt } from '../../lib/jwt.js';
import { BRIDGE_VERSION, type BridgeConfig } from '../config.js';
import { GitalyAddressInvalid } from '../errors.js';
import type { Exchange } from '../exchange.js';
import { CORRELATION_HEADER, preauthHeaders, TEXT_PLAIN } from '../headers.js';
import type { BridgeMetrics } from '../metrics.js';
import { type PreauthResponse, preauthorize } from '../preauth.js';
import type { RouteRequest, Served } from '../routes.js';

/** What the three git HTTP rows share with the tunnels. */
export interface GitHttpContext {
  config: Readonly<BridgeConfig>;
  metrics: BridgeMetrics;
  gitaly: GitalyConnections;
  workhorseKey: JwtKey;
  agents: { http: http.Agent; https: https.Agent };
}

export type Authorized = {
  ok: true;
  auth: PreauthResponse;
  connection: GitalyConnection;
  /** Copied to the client's response on success (Kerberos/SPNEGO), as Workhorse's `copyAuthHeader`. */
  wwwAuthenticate: string | string[] | undefined;
};

/** Workhorse re-keys Rails' header for "broken clients that do case-sensitive header lookup" (HTTP/1.1). */
function rekeyWwwAuthenticate(ex: Exchange, headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const value = headers['www-authenticate'];
  if (value === undefined || ex.protocol !== 'h1') return headers;
  const { 'www-authenticate': _dropped, ...rest } = headers;
  return { ...rest, 'WWW-Authenticate': value };
}

function failed(ex: Exchange, req: RouteRequest, error: AppError): Served {
  ex.reject(500, { ...TEXT_PLAIN, [CORRELATION_HEADER]: req.correlationId }, 'Internal Server Error\n');
  return { outcome: 'system', status: 500, fields: { reason: error.message, error_code: error.code } };
}

/**
 * Workhorse's `PreAuthorizeHandler(…, "")` for the git routes: the client's method, path and query
 * to Rails with no body; only `200 application/vnd.gitlab-workhorse+json` is a yes, anything else is
 * relayed (≤ 32 KiB, `WWW-Authenticate` re-keyed). Then the Gitaly connection of `GitalyServer`.
 */
export async function authorizeGitHttp(
  ex: Exchange,
  req: RouteRequest,
  ctx: GitHttpContext,
): Promise<Authorized | { ok: false; served: Served }> {
  const abort = new AbortController();
  ex.onClientGone(() => abort.abort());
  let pre: Awaited<ReturnType<typeof preauthorize>>;
  try {
    pre = await preauthorize({
      railsUrl: ctx.config.railsUrl,
      url: ex.url,
      method: ex.req.method === 'GET' ? 'GET' : 'POST',
      headers: preauthHeaders(ex.headers, {
        version: BRIDGE_VERSION,
        workhorseJwt: await signWorkhorseJwt(ctx.workhorseKey),
        correlationId: req.correlationId,
      }),
      timeoutMs: ctx.config.preauthTimeoutMs,
      signal: abort.signal,
      agents: ctx.agents,
    });
  } catch (err) {
    if (ex.clientGone) return { ok: false, served: { outcome: 'client-gone' } };
    return { ok: false, served: failed(ex, req, err as AppError) };
  }
  if (ex.clientGone) return { ok: false, served: { outcome: 'client-gone' } };
  if (pre.kind === 'refused') {
    const headers = { ...rekeyWwwAuthenticate(ex, pre.headers), [CORRELATION_HEADER]: req.correlationId };
    ex.reject(pre.status, headers, pre.body);
    const outcome = pre.status >= 500 ? 'system' : 'policy';
    return {
      ok: false,
      served: { outcome, status: pre.status, fields: { reason: 'pre-authorization refused' } },
    };
  }
  try {
    const { address, token } = pre.auth.GitalyServer;
    return {
      ok: true,
      auth: pre.auth,
      connection: ctx.gitaly.get(address, token),
      wwwAuthenticate: pre.wwwAuthenticate,
    };
  } catch (err) {
    if (!(err instanceof GitalyAddressError)) throw err;
    return { ok: false, served: failed(ex, req, GitalyAddressInvalid(err.message)) };
  }
}
