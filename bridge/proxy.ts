import http from 'node:http';
import https from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../lib/logger.js';
import { Exchange } from './exchange.js';
import {
  CORRELATION_HEADER,
  correlationIdFrom,
  proxyRequestHeaders,
  proxyResponseHeaders,
} from './headers.js';
import type { BridgeMetrics } from './metrics.js';

export interface ProxyContext {
  railsUrl: string;
  agents: { http: http.Agent; https: https.Agent };
  logger: Logger;
  metrics: BridgeMetrics;
}

/**
 * Everything that is not a tunnel goes to Rails unchanged, streaming both ways, as Workhorse's
 * catch-all proxy: method, path and query, end-to-end headers plus `X-Forwarded-For`/`-Proto`.
 * Bodies are never parsed here.
 */
export function registerProxy(app: FastifyInstance, ctx: ProxyContext): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  app.all('/*', (request, reply) => {
    reply.hijack();
    forward(new Exchange(request.raw, reply.raw), ctx);
  });
}

function forward(ex: Exchange, ctx: ProxyContext): void {
  const correlationId = correlationIdFrom(ex.headers);
  const url = new URL(`${ctx.railsUrl}${ex.url}`);
  const secure = url.protocol === 'https:';
  const started = Date.now();
  const log = ctx.logger.child({ correlation_id: correlationId, method: ex.req.method, path: url.pathname });
  const upstream = (secure ? https : http).request(url, {
    method: ex.req.method,
    headers: proxyRequestHeaders(ex.headers, {
      clientIp: ex.remoteAddress,
      proto: ex.encrypted ? 'https' : 'http',
      correlationId,
    }),
    agent: secure ? ctx.agents.https : ctx.agents.http,
  });
  ex.onClientGone(() => upstream.destroy());
  upstream.on('response', (res) => {
    const status = res.statusCode ?? 502;
    ctx.metrics.proxied.inc({ status: `${Math.floor(status / 100)}xx` });
    log.info({ status, duration_ms: Date.now() - started }, 'proxy');
    ex.begin(status, { ...proxyResponseHeaders(res.headers), [CORRELATION_HEADER]: correlationId });
    res.on('data', (chunk: Buffer) => {
      if (!ex.write(chunk)) {
        res.pause();
        ex.onDrain(() => res.resume());
      }
    });
    res.on('end', () => ex.end());
    res.on('error', (err) => {
      log.warn({ err }, 'proxy response from Rails broke off');
      ex.destroy();
    });
  });
  upstream.on('error', (err) => {
    if (ex.clientGone) return;
    if (ex.headersSent) {
      ex.destroy();
      return;
    }
    ctx.metrics.proxied.inc({ status: 'error' });
    log.error({ err, duration_ms: Date.now() - started }, 'proxy request to Rails failed');
    ex.reject(
      502,
      { 'content-type': 'text/plain; charset=utf-8', [CORRELATION_HEADER]: correlationId },
      'Bad Gateway\n',
    );
  });
  ex.body.pipe(upstream);
}
