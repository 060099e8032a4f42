import type http from 'node:http';
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { AppError } from '../lib/errors.js';
import { BODY_FRAMING_HEADER, FRAMING_VERSION, RESPONSE_FRAMING_HEADER } from '../lib/framing.js';
import { GitalyAddressError, type GitalyConnection, type GitalyConnections } from '../lib/gitaly/index.js';
import { type JwtKey, SHELL_HEADER, signWorkhorseJwt, verifyShellJwt } from '../lib/jwt.js';
import type { Logger } from '../lib/logger.js';
import { BRIDGE_VERSION, type BridgeConfig } from './config.js';
import { GitalyAddressInvalid, ShuttingDown } from './errors.js';
import type { Exchange } from './exchange.js';
import { callMetadata, firstRequest } from './gitaly-client.js';
import { CORRELATION_HEADER, correlationIdFrom, headerValue, preauthHeaders } from './headers.js';
import type { TunnelLimiter } from './limits.js';
import type { BridgeMetrics, Outcome } from './metrics.js';
import { type PreauthOutcome, type PreauthResponse, preauthorize } from './preauth.js';
import { compatibleEncoder, framedEncoder } from './response-encoder.js';
import type { TunnelMatch } from './routes.js';
import { TunnelStream } from './tunnel-stream.js';

export interface TunnelContext {
  config: Readonly<BridgeConfig>;
  logger: Logger;
  metrics: BridgeMetrics;
  limiter: TunnelLimiter;
  gitaly: GitalyConnections;
  shellKey: JwtKey;
  workhorseKey: JwtKey;
  agents: { http: http.Agent; https: https.Agent };
  /** Streaming tunnels, so shutdown can cancel the ones that outlive the grace period. */
  active: Set<TunnelStream>;
  isClosing: () => boolean;
}

const GEO_AUTHORIZATION = /^GL-Geo \S/;
const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' };

interface AccessFields {
  status?: number;
  gl_id?: string;
  reason?: string;
  grpc_code?: string;
  exit_status?: number;
  error_code?: string;
  bytes_in?: number;
  bytes_out?: number;
  gitaly_transport?: 'sidechannel' | 'stream';
}

/**
 * `POST /<project>.git/ssh-*`: token check, pre-authorization, limits, then `200` and the
 * Gitaly stream. Every answer before the `200` is given without reading the request body.
 */
export async function handleTunnel(ex: Exchange, match: TunnelMatch, ctx: TunnelContext): Promise<void> {
  const started = performance.now();
  const route = match.route.id;
  const correlationId = correlationIdFrom(ex.headers);
  const framed = headerValue(ex.headers, RESPONSE_FRAMING_HEADER) === FRAMING_VERSION;
  const log = ctx.logger.child({
    correlation_id: correlationId,
    route,
    project: match.project,
    protocol: ex.protocol,
  });
  const access = (outcome: Outcome, fields: AccessFields) => {
    const seconds = (performance.now() - started) / 1000;
    ctx.metrics.tunnels.inc({ route, outcome });
    ctx.metrics.duration.observe({ route, outcome }, seconds);
    const line = {
      outcome,
      framed,
      duration_ms: Math.round(seconds * 1000),
      bytes_in: 0,
      bytes_out: 0,
      ...fields,
    };
    if (outcome === 'system') log.error(line, 'tunnel');
    else log.info(line, 'tunnel');
  };
  const reject = (outcome: Outcome, status: number, body: string, fields: AccessFields = {}) => {
    ex.reject(status, { ...TEXT, [CORRELATION_HEADER]: correlationId }, body);
    access(outcome, { status, ...fields });
  };
  const preauthAbort = new AbortController();
  ex.onClientGone(() => preauthAbort.abort());

  if (ctx.isClosing()) {
    const err = ShuttingDown('This server is shutting down. Please try again.');
    reject('system', err.statusCode, `${err.message}\n`, { error_code: err.code });
    return;
  }

  // A Geo request (`Authorization: GL-Geo …`, no shell token) is Rails' to judge: its signature
  // uses the Geo node's key, which the bridge does not have. Everything else needs a valid shell token.
  const shellToken = headerValue(ex.headers, SHELL_HEADER);
  const geo =
    shellToken === undefined && GEO_AUTHORIZATION.test(headerValue(ex.headers, 'authorization') ?? '');
  let tokenGlId: string | undefined;
  if (!geo) {
    const verdict = await verifyShellJwt(ctx.shellKey, shellToken, { requireGlId: true });
    if (ex.clientGone) return access('client-gone', {});
    if (!verdict.ok) return reject('policy', 404, 'Not found', { reason: `shell token ${verdict.reason}` });
    tokenGlId = verdict.claims.gl_id;
  }

  let pre: PreauthOutcome;
  const preStarted = performance.now();
  try {
    pre = await preauthorize({
      railsUrl: ctx.config.railsUrl,
      url: ex.url,
      headers: preauthHeaders(ex.headers, {
        version: BRIDGE_VERSION,
        workhorseJwt: await signWorkhorseJwt(ctx.workhorseKey),
        correlationId,
      }),
      timeoutMs: ctx.config.preauthTimeoutMs,
      signal: preauthAbort.signal,
      agents: ctx.agents,
    });
  } catch (err) {
    if (ex.clientGone) {
      return access('client-gone', { gl_id: tokenGlId, reason: 'client went away during pre-authorization' });
    }
    ctx.metrics.preauthDuration.observe({ status: 'error' }, (performance.now() - preStarted) / 1000);
    const e = err as AppError;
    return reject('system', 500, 'Internal Server Error\n', {
      gl_id: tokenGlId,
      reason: e.message,
      error_code: e.code,
    });
  }
  ctx.metrics.preauthDuration.observe(
    { status: pre.kind === 'authorized' ? '200' : String(pre.status) },
    (performance.now() - preStarted) / 1000,
  );
  if (ex.clientGone) {
    return access('client-gone', { gl_id: tokenGlId, reason: 'client went away during pre-authorization' });
  }
  if (pre.kind === 'refused') {
    ex.reject(pre.status, { ...pre.headers, [CORRELATION_HEADER]: correlationId }, pre.body);
    return access(pre.status >= 500 ? 'system' : 'policy', {
      status: pre.status,
      gl_id: tokenGlId,
      reason: 'pre-authorization refused',
    });
  }

  const auth = pre.auth;
  const glId = auth.GL_ID;
  const slot = ctx.limiter.acquire(glId);
  if (!slot.ok) {
    const e = slot.error;
    return reject('policy', e.statusCode, `${e.message}\n`, { gl_id: glId, error_code: e.code });
  }
  try {
    let connection: GitalyConnection;
    try {
      connection = ctx.gitaly.get(auth.GitalyServer.address, auth.GitalyServer.token);
    } catch (err) {
      if (!(err instanceof GitalyAddressError)) throw err;
      const e = GitalyAddressInvalid(err.message);
      return reject('system', 500, 'Internal Server Error\n', {
        gl_id: glId,
        reason: e.message,
        error_code: e.code,
      });
    }
    await stream(ex, match, ctx, {
      connection,
      auth,
      wwwAuthenticate: pre.wwwAuthenticate,
      glId,
      correlationId,
      framed,
      log,
      access,
    });
  } finally {
    slot.release();
  }
}

async function stream(
  ex: Exchange,
  match: TunnelMatch,
  ctx: TunnelContext,
  t: {
    connection: GitalyConnection;
    auth: PreauthResponse;
    wwwAuthenticate: string | string[] | undefined;
    glId: string;
    correlationId: string;
    framed: boolean;
    log: Logger;
    access: (outcome: Outcome, fields: AccessFields) => void;
  },
): Promise<void> {
  const route = match.route.id;
  const { config, metrics } = ctx;
  const headers: Record<string, string | string[]> = { [CORRELATION_HEADER]: t.correlationId };
  if (t.framed) headers[RESPONSE_FRAMING_HEADER] = FRAMING_VERSION;
  if (t.wwwAuthenticate) headers['www-authenticate'] = t.wwwAuthenticate;
  ex.begin(200, headers);

  const server = t.auth.GitalyServer;
  const call = t.connection.open(
    match.route.service,
    firstRequest(match.route, t.auth, headerValue(ex.headers, 'git-protocol')),
    callMetadata(server.token, t.correlationId, server.call_metadata),
  );
  const bytesIn = metrics.bytes.labels(route, 'in');
  const bytesOut = metrics.bytes.labels(route, 'out');
  const tunnel = new TunnelStream(ex, call, {
    encoder: t.framed ? framedEncoder : compatibleEncoder,
    bodyFramed: headerValue(ex.headers, BODY_FRAMING_HEADER) === FRAMING_VERSION,
    maxBodyBytes: route === 'ssh_receive_pack' ? config.maxReceivePackBytes : 0,
    uploadPackMode: route === 'ssh_upload_pack' ? config.gitalyUploadPack : undefined,
    idleTimeoutMs: config.tunnelIdleTimeoutMs,
    maxDurationMs: config.tunnelMaxDurationMs,
    keepaliveMs: config.responseKeepaliveMs,
    onBytesIn: (n) => bytesIn.inc(n),
    onBytesOut: (n) => bytesOut.inc(n),
  });
  ctx.active.add(tunnel);
  metrics.tunnelsInFlight.inc({ route });
  try {
    const result = await tunnel.run();
    if (result.grpcCode) metrics.gitalyErrors.inc({ route, code: result.grpcCode });
    t.access(result.outcome, {
      status: 200,
      gl_id: t.glId,
      bytes_in: result.bytesIn,
      bytes_out: result.bytesOut,
      reason: result.reason,
      grpc_code: result.grpcCode,
      exit_status: result.exitStatus,
      error_code: result.error?.code,
      gitaly_transport: call.transport,
    });
  } finally {
    metrics.tunnelsInFlight.dec({ route });
    ctx.active.delete(tunnel);
  }
}
