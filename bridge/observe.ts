import { performance } from 'node:perf_hooks';
import type { Logger } from '../lib/logger.js';
import { Exchange, type ServerReply, type ServerRequest } from './exchange.js';
import { correlationIdFrom, TEXT_PLAIN } from './headers.js';
import type { RequestTracker } from './in-flight.js';
import { type BridgeJournal, journalRequest } from './journal.js';
import type { BridgeMetrics } from './metrics.js';
import { type BackendId, matchRoute, type Route, type RouteMatch, type Served } from './routes.js';

/** The access line's message per backend (kept from before the route table: `tunnel`, `proxy`). */
const ACCESS_MESSAGE: Record<BackendId, string> = { gitaly: 'tunnel', rails: 'proxy', self: 'health' };

export interface ObserveDeps {
  logger: Logger;
  metrics: BridgeMetrics;
  /** Where every request is journaled once it is over (absent: nowhere). */
  journal?: BridgeJournal;
}

export type ObservedHandler = (ex: Exchange, match: RouteMatch) => Promise<void>;

/**
 * Workhorse's `observabilityMiddlewares` for one row: binds the request's logger, runs the
 * handler, then writes exactly one access line and `bridge_requests_total` /
 * `bridge_request_duration_seconds` (route, backend, outcome). A handler that throws is answered
 * 500 (or cut off, when its answer had begun) and logged as `system` with the error.
 */
export function observe(route: Route, deps: ObserveDeps): ObservedHandler {
  return async (ex, match) => {
    const started = performance.now();
    const startedAt = new Date();
    const correlationId = correlationIdFrom(ex.headers);
    const log = deps.logger.child({
      correlation_id: correlationId,
      route: route.id,
      backend: route.backend,
      protocol: ex.protocol,
      method: ex.req.method,
      path: match.path,
      ...match.params,
    });
    let served: Served;
    try {
      served = await route.handler(ex, { route, params: match.params, path: match.path, correlationId, log });
    } catch (err) {
      served = answerFailure(ex, err);
    }
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.observeRequest(route.id, route.backend, served.outcome, seconds);
    const line = {
      outcome: served.outcome,
      status: served.status,
      duration_ms: Math.round(seconds * 1000),
      ...served.fields,
    };
    if (served.outcome === 'system') log.error(line, ACCESS_MESSAGE[route.backend]);
    else log.info(line, ACCESS_MESSAGE[route.backend]);
    if (deps.journal)
      journalRequest(deps.journal, ex, match, served, { startedAt, durationMs: seconds * 1000 });
  };
}

function answerFailure(ex: Exchange, err: unknown): Served {
  const fields = { err, reason: 'handler failed' };
  if (ex.headersSent || ex.clientGone) {
    ex.destroy();
    return { outcome: 'system', fields };
  }
  ex.reject(500, TEXT_PLAIN, 'Internal Server Error\n');
  return { outcome: 'system', status: 500, fields };
}

export interface DispatchDeps extends ObserveDeps {
  requests: RequestTracker;
  isClosing: () => boolean;
}

/** The request listener of both servers: counts the request, matches the table, runs the observed row. */
export function dispatcher(
  table: readonly Route[],
  deps: DispatchDeps,
): (req: ServerRequest, res: ServerReply) => void {
  const observed = new Map(table.map((route) => [route, observe(route, deps)]));
  return (req, res) => {
    deps.requests.track(res);
    if (deps.isClosing() && req.httpVersionMajor === 1) res.setHeader('connection', 'close');
    const ex = new Exchange(req, res);
    const contentType = req.headers['content-type'];
    const match = matchRoute(table, req.method, req.url, contentType);
    const serve = match && observed.get(match.route);
    // The table ends in a catch-all; a table without one answers what it does not know 404.
    if (!match || !serve) return ex.send(404, TEXT_PLAIN, 'Not Found\n');
    void serve(ex, match);
  };
}
