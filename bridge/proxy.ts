import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Exchange } from './exchange.js';
import { CORRELATION_HEADER, proxyRequestHeaders, proxyResponseHeaders, TEXT_PLAIN } from './headers.js';
import { type BridgeMetrics, outcomeOfStatus } from './metrics.js';
import type { RouteHandler, RouteRequest, Served } from './routes.js';

export interface ProxyContext {
  railsUrl: string;
  agents: { http: http.Agent; https: https.Agent };
  metrics: BridgeMetrics;
}

/**
 * Everything that is not a tunnel goes to Rails unchanged, streaming both ways, as Workhorse's
 * catch-all proxy: method, path and query, end-to-end headers plus `X-Forwarded-For`/`-Proto`.
 * Bodies are never parsed here. Resolves once the exchange is over.
 */
export function proxyHandler(ctx: ProxyContext): RouteHandler {
  return (ex, req) =>
    new Promise<Served>((resolve) => {
      if (!ex.url.startsWith('/')) {
        // Absolute-form or `*` targets: not a path on Rails.
        ex.reject(400, TEXT_PLAIN, 'Bad Request\n');
        resolve({ outcome: 'policy', status: 400, fields: { reason: 'request target is not a path' } });
        return;
      }
      forward(ex, req, ctx, resolve);
    });
}

function forward(ex: Exchange, req: RouteRequest, ctx: ProxyContext, resolve: (s: Served) => void): void {
  const url = new URL(`${ctx.railsUrl}${ex.url}`);
  const secure = url.protocol === 'https:';
  let status: number | undefined;
  let failure: Served | undefined;
  const bytes = { bytes_in: 0, bytes_out: 0 };
  const upstream = (secure ? https : http).request(url, {
    method: ex.req.method,
    headers: proxyRequestHeaders(ex.headers, {
      clientIp: ex.remoteAddress,
      proto: ex.encrypted ? 'https' : 'http',
      correlationId: req.correlationId,
    }),
    agent: secure ? ctx.agents.https : ctx.agents.http,
  });
  ex.onClientGone(() => upstream.destroy());
  upstream.on('response', (res) => {
    status = res.statusCode ?? 502;
    ctx.metrics.proxied.inc({ status: `${Math.floor(status / 100)}xx` });
    ex.begin(status, { ...proxyResponseHeaders(res.headers), [CORRELATION_HEADER]: req.correlationId });
    relay(res, ex, bytes, (err) => {
      req.log.warn({ err }, 'proxy response from Rails broke off');
      failure = {
        outcome: 'system',
        status,
        fields: { reason: `response from Rails broke off: ${err.message}` },
      };
      ex.destroy();
    });
  });
  upstream.on('error', (err) => {
    if (ex.clientGone) return;
    if (ex.headersSent) {
      failure = { outcome: 'system', status, fields: { err, reason: 'connection to Rails broke off' } };
      ex.destroy();
      return;
    }
    ctx.metrics.proxied.inc({ status: 'error' });
    failure = { outcome: 'system', status: 502, fields: { err, reason: 'proxy request to Rails failed' } };
    ex.reject(502, { ...TEXT_PLAIN, [CORRELATION_HEADER]: req.correlationId }, 'Bad Gateway\n');
  });
  ex.onDone(() => {
    if (failure) resolve({ ...failure, fields: { ...failure.fields, ...bytes } });
    else if (ex.clientGone) resolve({ outcome: 'client-gone', status, fields: bytes });
    else resolve({ outcome: outcomeOfStatus(status ?? 502), status, fields: bytes });
  });
  // Counted for the access line and the journal; the pipe keeps its flow control.
  ex.body.on('data', (chunk: Buffer) => {
    bytes.bytes_in += chunk.length;
  });
  ex.body.pipe(upstream);
}

/** Rails' response body to the client, paused while the client's side is full; counted in `bytes`. */
function relay(
  res: IncomingMessage,
  ex: Exchange,
  bytes: { bytes_out: number },
  onError: (err: Error) => void,
): void {
  let waiting = false;
  const resume = () => {
    waiting = false;
    res.resume();
  };
  res.on('data', (chunk: Buffer) => {
    bytes.bytes_out += chunk.length;
    if (!ex.write(chunk) && !waiting) {
      waiting = true;
      res.pause();
      ex.onDrain(resume);
    }
  });
  res.on('end', () => ex.end());
  res.on('error', onError);
  // A client gone while Rails' side was paused: its drain never comes.
  ex.onDone(() => {
    if (waiting) ex.removeDrain(resume);
  });
}
