import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { Logger } from '../../lib/logger.js';
import type { CellDirectory } from '../cells/directory.js';
import type { UpstreamCall, UpstreamResponse } from '../cells/transport.js';
import type { RouterMetrics } from '../metrics.js';
import type { Classifier } from '../routing/classifier.js';

/**
 * The HTTP front, minimal for now: every request goes to the cell that learn names for its path
 * (legacy cell when learning fails), streamed both ways, with `X-Forwarded-For`. A bodiless request
 * answered `421` is retried once after learning again. Routing decisions go through `routes` only,
 * so a rule engine can later wrap or replace the learn-based classifier.
 */
export type RouteSelector = Pick<Classifier, 'classify' | 'invalidate'>;

export interface HttpFrontDeps {
  routes: RouteSelector;
  cells: CellDirectory;
  metrics: RouterMetrics;
  log: Logger;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'http2-settings',
]);

export function createHttpFront(deps: HttpFrontDeps): http.Server {
  const server = http.createServer((req, res) => {
    proxy(deps, req, res).catch((err: unknown) => deps.log.error({ err }, 'http front failed'));
  });
  // Long uploads and downloads are bounded by the cells, not by Node's defaults.
  server.requestTimeout = 0;
  return server;
}

function requestHeaders(req: IncomingMessage, requestId: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const ip = req.socket.remoteAddress ?? '';
  out['x-forwarded-for'] = out['x-forwarded-for'] ? `${out['x-forwarded-for']}, ${ip}` : ip;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  out['x-forwarded-proto'] = 'http';
  out['x-request-id'] = requestId;
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(':') || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  return out;
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

async function proxy(deps: HttpFrontDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' && header !== '' ? header : randomUUID();
  const target = req.url ?? '/';
  const path = target.split('?')[0] || '/';
  const method = req.method ?? 'GET';
  const log = deps.log.child({ request_id: requestId, method, path });
  deps.metrics.httpRequests++;
  const streamBody = hasBody(req);
  let call: UpstreamCall | undefined;
  res.once('close', () => {
    if (!res.writableFinished) call?.cancel();
  });
  try {
    for (let attempt = 1; ; attempt++) {
      const { cell, via } = await deps.routes.classify(path, method, { requestId, log });
      call = await deps.cells
        .transport(cell)
        .open({ method, path: target, headers: requestHeaders(req, requestId), streamBody });
      if (streamBody) pipeline(req, call.body, () => undefined);
      const upstream: UpstreamResponse = await call.response;
      if (upstream.status === 421 && !streamBody && attempt === 1) {
        deps.metrics.redirects++;
        deps.routes.invalidate(path);
        call.cancel();
        log.info({ cell: cell.name }, 'cell does not own the path (421), learning again');
        continue;
      }
      log.debug({ cell: cell.name, route: via, status: upstream.status }, 'proxied');
      res.writeHead(upstream.status, responseHeaders(upstream.headers));
      const current = call;
      pipeline(upstream.body, res, (err) => {
        if (err) {
          current.cancel();
          log.debug({ err }, 'response stream ended early');
        }
      });
      return;
    }
  } catch (err) {
    log.warn({ err }, 'cell unreachable');
    call?.cancel();
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Bad Gateway\n');
    } else res.destroy();
  }
}
