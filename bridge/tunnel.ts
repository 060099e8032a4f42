import type http from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { signingNowMs } from '../lib/clock.js';
import type { AppError } from '../lib/errors.js';
import { BODY_FRAMING_HEADER, FRAMING_VERSION, RESPONSE_FRAMING_HEADER } from '../lib/framing.js';
import {
  GitalyAddressError,
  type GitalyConnection,
  type GitalyConnections,
  type GitService,
} from '../lib/gitaly/index.js';
import { headerValue } from '../lib/http-headers.js';
import { type JwtKey, SHELL_HEADER, signWorkhorseJwt, verifyShellJwt } from '../lib/jwt.js';
import { failureOutcome } from '../lib/outcome.js';
import { BRIDGE_VERSION, type BridgeConfig } from './config.js';
import { GitalyAddressInvalid, ShuttingDown } from './errors.js';
import type { Exchange } from './exchange.js';
import { callMetadata, firstRequest } from './gitaly-client.js';
import { CORRELATION_HEADER, preauthHeaders, TEXT_PLAIN } from './headers.js';
import type { TunnelRegistry } from './in-flight.js';
import type { TunnelLimiter } from './limits.js';
import { type BridgeMetrics, SteppedCount } from './metrics.js';
import { type PreauthOutcome, type PreauthResponse, preauthorize } from './preauth.js';
import { compatibleEncoder, framedEncoder } from './response-encoder.js';
import type { RouteHandler, RouteRequest, Served } from './routes.js';
import { TunnelStream } from './tunnel-stream.js';

export interface TunnelContext {
  config: Readonly<BridgeConfig>;
  metrics: BridgeMetrics;
  limiter: TunnelLimiter;
  gitaly: GitalyConnections;
  shellKey: JwtKey;
  workhorseKey: JwtKey;
  agents: { http: http.Agent; https: https.Agent };
  tunnels: TunnelRegistry;
  isClosing: () => boolean;
}

/** Every request header a tunnel uses, read once (the correlation id is the route request's). */
export interface TunnelHeaders {
  /** `Gitlab-Cells-Response-Framing: v1`. */
  framed: boolean;
  shellToken: string | undefined;
  /** `Authorization: GL-Geo …`. */
  geoAuthorization: boolean;
  /** `Gitlab-Shell-Body-Framing: v1`. */
  bodyFramed: boolean;
  gitProtocol: string | undefined;
}

/**
 * Why a tunnel ended before its `200`, one kind per answer: the client left (no answer), a bad
 * shell token (`404 Not found`, as Rails), Rails' refusal passed back, a refusal the user reads
 * (limits, shutdown: the error's status and message), or a failure of ours (`500`, details logged).
 */
export type Refusal =
  | { kind: 'client-gone'; glId?: string; reason?: string }
  | { kind: 'bad-token'; reason: string }
  | { kind: 'passed-back'; glId?: string; status: number; headers: OutgoingHttpHeaders; body: Buffer }
  | { kind: 'refused'; glId?: string; error: AppError }
  | { kind: 'failed'; glId?: string; error: AppError };

/** One step of the tunnel: its result, or the refusal that ends the tunnel. */
type Step<T> = ({ ok: true } & T) | { ok: false; refusal: Refusal };

const GEO_AUTHORIZATION = /^GL-Geo \S/;
const TEXT = { ...TEXT_PLAIN, 'x-content-type-options': 'nosniff' };
const GONE_DURING_PREAUTH = 'client went away during pre-authorization';

const refuse = (refusal: Refusal): { ok: false; refusal: Refusal } => ({ ok: false, refusal });

export function parseTunnelHeaders(headers: IncomingHttpHeaders): TunnelHeaders {
  return {
    framed: headerValue(headers, RESPONSE_FRAMING_HEADER) === FRAMING_VERSION,
    shellToken: headerValue(headers, SHELL_HEADER),
    geoAuthorization: GEO_AUTHORIZATION.test(headerValue(headers, 'authorization') ?? ''),
    bodyFramed: headerValue(headers, BODY_FRAMING_HEADER) === FRAMING_VERSION,
    gitProtocol: headerValue(headers, 'git-protocol'),
  };
}

/**
 * `POST /<project>.git/ssh-*`: shell token (or Geo) → pre-authorization → limiter slot → Gitaly
 * connection, then `200` and the Gitaly stream. Every answer before the `200` is given without
 * reading the request body.
 */
export function tunnelHandler(service: GitService, ctx: TunnelContext): RouteHandler {
  return async (ex, req) => {
    const t = parseTunnelHeaders(ex.headers);
    const served = await runTunnel(ex, req, t, service, ctx);
    return { ...served, fields: { framed: t.framed, bytes_in: 0, bytes_out: 0, ...served.fields } };
  };
}

async function runTunnel(
  ex: Exchange,
  req: RouteRequest,
  t: TunnelHeaders,
  service: GitService,
  ctx: TunnelContext,
): Promise<Served> {
  if (ctx.isClosing()) {
    return answer(ex, req, {
      kind: 'refused',
      error: ShuttingDown('This server is shutting down. Please try again.'),
    });
  }
  const identity = await verifyIdentity(ex, req, t, ctx);
  if (!identity.ok) return answer(ex, req, identity.refusal);
  const pre = await preauthorizeTunnel(ex, req, ctx, identity.glId);
  if (!pre.ok) return answer(ex, req, pre.refusal);
  const slot = acquireSlot(ctx, pre.auth.GL_ID);
  if (!slot.ok) return answer(ex, req, slot.refusal);
  try {
    const gitaly = connectGitaly(ctx, pre.auth);
    if (!gitaly.ok) return answer(ex, req, gitaly.refusal);
    return await streamTunnel(ex, req, t, service, ctx, { ...pre, connection: gitaly.connection });
  } finally {
    slot.release();
  }
}

/**
 * A Geo request (`Authorization: GL-Geo …`, no shell token) on a row that allows Geo is Rails' to
 * judge: its signature uses the Geo node's key, which the bridge does not have. Everything else
 * needs a valid shell token with a `gl_id`.
 */
async function verifyIdentity(
  ex: Exchange,
  req: RouteRequest,
  t: TunnelHeaders,
  ctx: TunnelContext,
): Promise<Step<{ glId: string | undefined }>> {
  if (req.route.options.allowGeo && t.shellToken === undefined && t.geoAuthorization) {
    return { ok: true, glId: undefined };
  }
  // Judged by the bridge's own clock: `clockSkew` on the bridge alone expires every router's token.
  const now = new Date(signingNowMs());
  const verdict = await verifyShellJwt(ctx.shellKey, t.shellToken, { requireGlId: true, now });
  if (ex.clientGone) return refuse({ kind: 'client-gone' });
  if (!verdict.ok) return refuse({ kind: 'bad-token', reason: verdict.reason });
  return { ok: true, glId: verdict.claims.gl_id };
}

/** Asks Rails (same path and query, no body); aborted when the client goes away. */
async function preauthorizeTunnel(
  ex: Exchange,
  req: RouteRequest,
  ctx: TunnelContext,
  glId: string | undefined,
): Promise<Step<{ auth: PreauthResponse; wwwAuthenticate: string | string[] | undefined }>> {
  const abort = new AbortController();
  ex.onClientGone(() => abort.abort());
  const started = performance.now();
  const recordLatency = (status: string) =>
    ctx.metrics.preauthDuration.observe({ status }, (performance.now() - started) / 1000);
  let pre: PreauthOutcome;
  try {
    pre = await preauthorize({
      railsUrl: ctx.config.railsUrl,
      url: ex.url,
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
    if (ex.clientGone) return refuse({ kind: 'client-gone', glId, reason: GONE_DURING_PREAUTH });
    recordLatency('error');
    return refuse({ kind: 'failed', glId, error: err as AppError });
  }
  recordLatency(pre.kind === 'authorized' ? '200' : String(pre.status));
  if (ex.clientGone) return refuse({ kind: 'client-gone', glId, reason: GONE_DURING_PREAUTH });
  if (pre.kind === 'refused') {
    return refuse({ kind: 'passed-back', glId, status: pre.status, headers: pre.headers, body: pre.body });
  }
  return { ok: true, auth: pre.auth, wwwAuthenticate: pre.wwwAuthenticate };
}

function acquireSlot(ctx: TunnelContext, glId: string): Step<{ release: () => void }> {
  const slot = ctx.limiter.acquire(glId);
  return slot.ok ? slot : refuse({ kind: 'refused', glId, error: slot.error });
}

/**
 * The connection for Rails' `GitalyServer`: the cache validates the address before it creates
 * anything, so an address Gitaly clients would not dial is answered `500` before the `200`.
 */
function connectGitaly(ctx: TunnelContext, auth: PreauthResponse): Step<{ connection: GitalyConnection }> {
  try {
    return { ok: true, connection: ctx.gitaly.get(auth.GitalyServer.address, auth.GitalyServer.token) };
  } catch (err) {
    if (!(err instanceof GitalyAddressError)) throw err;
    return refuse({ kind: 'failed', glId: auth.GL_ID, error: GitalyAddressInvalid(err.message) });
  }
}

/** Answers a refusal (never reading the request body) and says what the access line records. */
function answer(ex: Exchange, req: RouteRequest, r: Refusal): Served {
  const headers = (h: OutgoingHttpHeaders) => ({ ...h, [CORRELATION_HEADER]: req.correlationId });
  switch (r.kind) {
    case 'client-gone':
      return { outcome: 'client-gone', fields: { gl_id: r.glId, reason: r.reason } };
    case 'bad-token':
      ex.reject(404, headers(TEXT), 'Not found');
      return { outcome: 'policy', status: 404, fields: { reason: `shell token ${r.reason}` } };
    case 'passed-back':
      ex.reject(r.status, headers(r.headers), r.body);
      return {
        outcome: r.status >= 500 ? 'system' : 'policy',
        status: r.status,
        fields: { gl_id: r.glId, reason: 'pre-authorization refused' },
      };
    case 'refused':
      ex.reject(r.error.statusCode, headers(TEXT), `${r.error.message}\n`);
      return {
        outcome: failureOutcome(r.error),
        status: r.error.statusCode,
        fields: { gl_id: r.glId, error_code: r.error.code },
      };
    case 'failed':
      ex.reject(500, headers(TEXT), 'Internal Server Error\n');
      return {
        outcome: 'system',
        status: 500,
        fields: { gl_id: r.glId, reason: r.error.message, error_code: r.error.code },
      };
  }
}

/** After the `200`: the Gitaly call and the `TunnelStream` between it and the client. */
async function streamTunnel(
  ex: Exchange,
  req: RouteRequest,
  t: TunnelHeaders,
  service: GitService,
  ctx: TunnelContext,
  s: { connection: GitalyConnection; auth: PreauthResponse; wwwAuthenticate: string | string[] | undefined },
): Promise<Served> {
  const route = req.route.id;
  const { config, metrics } = ctx;
  const headers: OutgoingHttpHeaders = { [CORRELATION_HEADER]: req.correlationId };
  if (t.framed) headers[RESPONSE_FRAMING_HEADER] = FRAMING_VERSION;
  if (s.wwwAuthenticate) headers['www-authenticate'] = s.wwwAuthenticate;
  ex.begin(200, headers);

  const server = s.auth.GitalyServer;
  const call = s.connection.open(
    service,
    firstRequest(service, s.auth, t.gitProtocol),
    callMetadata(server.token, req.correlationId, server.call_metadata),
  );
  const bytesIn = new SteppedCount(metrics.bytes.labels(route, 'in'));
  const bytesOut = new SteppedCount(metrics.bytes.labels(route, 'out'));
  const tunnel = new TunnelStream(ex, call, {
    encoder: t.framed ? framedEncoder : compatibleEncoder,
    bodyFramed: t.bodyFramed,
    maxBodyBytes: req.route.options.bodyLimit ?? 0,
    uploadPackMode: service === 'upload-pack' ? config.gitalyUploadPack : undefined,
    idleTimeoutMs: config.tunnelIdleTimeoutMs,
    maxDurationMs: config.tunnelMaxDurationMs,
    keepaliveMs: config.responseKeepaliveMs,
    onBytesIn: (n) => bytesIn.add(n),
    onBytesOut: (n) => bytesOut.add(n),
  });
  metrics.tunnelsInFlight.inc({ route });
  try {
    const result = await ctx.tunnels.run(tunnel);
    if (result.grpcCode) metrics.gitalyErrors.inc({ route, code: result.grpcCode });
    return {
      outcome: result.outcome,
      status: 200,
      fields: {
        gl_id: s.auth.GL_ID,
        bytes_in: result.bytesIn,
        bytes_out: result.bytesOut,
        reason: result.reason,
        grpc_code: result.grpcCode,
        exit_status: result.exitStatus,
        error_code: result.error?.code,
        gitaly_transport: call.transport,
        body_end: result.bodyEnd,
        stdin_tail: result.stdinTail,
      },
    };
  } finally {
    bytesIn.flush();
    bytesOut.flush();
    metrics.tunnelsInFlight.dec({ route });
  }
}
