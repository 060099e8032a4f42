import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../lib/logger.js';
import type { CellDirectory } from '../cells/directory.js';
import type { UpstreamCall, UpstreamResponse } from '../cells/transport.js';
import type { RouterMetrics } from '../metrics.js';
import type { Classifier } from '../routing/classifier.js';
import { evaluate } from '../rules/engine.js';
import { parseCookies, RULE_ACTION_HEADER, RULE_TYPE_HEADER, ruleHeaders } from '../rules/http.js';
import type { Ruleset } from '../rules/load.js';
import { decideCell } from './decide.js';
import { checkPublicPath } from './public-path.js';

/**
 * The HTTP front. Per request:
 *
 * 1. `/api/v4/internal/…` → `404` (the internal API is not public); an undecodable path → `400`.
 * 2. The rules (seed 003 schema), top to bottom: a token a rule matches but cannot decode → `400`.
 * 3. The path's classification (route cache, else a learn call): a `routable`/`fixed` answer wins;
 *    for `fallback` (or a failed learn) the rule's cell, else the legacy cell (`decide.ts`).
 * 4. Proxy to that cell's bridge, streamed both ways, with `X-Forwarded-*`, `X-Request-Id` and, when
 *    a rule chose the cell, `X-GitLab-HTTP-Router-Rule-Action`/`-Type`. A bodiless request
 *    answered `421` is retried once after learning again. Optionally, `404` answers are held for a
 *    random time (`notFoundDelayMs`).
 */
export type RouteSelector = Pick<Classifier, 'classify' | 'invalidate'>;

export interface HttpFrontDeps {
  routes: RouteSelector;
  cells: CellDirectory;
  ruleset: Ruleset;
  metrics: RouterMetrics;
  log: Logger;
  /** `[min, max]` ms to hold a cell's `404`; undefined = off. */
  notFoundDelayMs?: readonly [number, number] | undefined;
  /** Random source for the 404 delay (tests). */
  random?: () => number;
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

/** Headers only the router sets: a client's own values are dropped. */
const ROUTER_HEADERS = new Set([RULE_ACTION_HEADER.toLowerCase(), RULE_TYPE_HEADER.toLowerCase()]);

export function createHttpFront(deps: HttpFrontDeps): http.Server {
  const server = http.createServer((req, res) => {
    proxy(deps, req, res).catch((err: unknown) => deps.log.error({ err }, 'http front failed'));
  });
  // Long uploads and downloads are bounded by the cells, not by Node's defaults.
  server.requestTimeout = 0;
  return server;
}

function requestHeaders(
  req: IncomingMessage,
  requestId: string,
  extra: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || ROUTER_HEADERS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const ip = req.socket.remoteAddress ?? '';
  out['x-forwarded-for'] = out['x-forwarded-for'] ? `${out['x-forwarded-for']}, ${ip}` : ip;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  out['x-forwarded-proto'] = 'http';
  out['x-request-id'] = requestId;
  for (const [name, value] of Object.entries(extra)) out[name.toLowerCase()] = value;
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

/** An answer of the router itself, in GitLab's JSON error shape; a request body is discarded. */
function answer(res: ServerResponse, status: number, message: string, requestId: string): void {
  res.req.resume();
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId });
  res.end(JSON.stringify({ message }));
}

/** Milliseconds to hold a `404`: uniform over `[min, max]` (both included); 0 when off. */
export function notFoundDelay(
  range: readonly [number, number] | undefined,
  random: () => number = Math.random,
): number {
  if (!range) return 0;
  const [min, max] = range;
  return Math.min(max, min + Math.floor(random() * (max - min + 1)));
}

async function proxy(deps: HttpFrontDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' && header !== '' ? header : randomUUID();
  const target = req.url ?? '/';
  const path = target.split('?')[0] || '/';
  const method = req.method ?? 'GET';
  const log = deps.log.child({ request_id: requestId, method, path });
  deps.metrics.httpRequests++;

  const verdict = target.startsWith('/') ? checkPublicPath(path) : 'malformed';
  if (verdict === 'malformed') return answer(res, 400, '400 Bad Request', requestId);
  if (verdict === 'internal') {
    deps.metrics.httpInternalBlocked++;
    log.info('internal API requested on the public HTTP front, answered 404');
    return answer(res, 404, '404 Not Found', requestId);
  }

  const rule = evaluate(deps.ruleset, {
    method,
    path,
    headers: req.headers,
    cookies: parseCookies(req.headers.cookie),
  });
  if (rule.kind === 'reject') {
    deps.metrics.httpRuleRejected++;
    log.info({ rule: rule.ruleId, reason: rule.message }, 'request rejected by a routing rule');
    return answer(res, rule.status, `400 Bad Request: ${rule.message}`, requestId);
  }
  const ruleId = rule.kind === 'none' ? undefined : rule.ruleId;

  const streamBody = hasBody(req);
  let call: UpstreamCall | undefined;
  res.once('close', () => {
    if (!res.writableFinished) call?.cancel();
  });
  try {
    for (let attempt = 1; ; attempt++) {
      const route = await deps.routes.classify(path, method, { requestId, log });
      const decision = decideCell(rule, route, deps.cells);
      const cell = decision.cell;
      if (decision.ignoredRule)
        log.warn({ rule: ruleId }, `routing rule not followed: ${decision.ignoredRule}`);
      const extra = decision.by === 'rule' ? ruleHeaders(rule) : {};
      call = await deps.cells
        .transport(cell)
        .open({ method, path: target, headers: requestHeaders(req, requestId, extra), streamBody });
      if (streamBody) pipeline(req, call.body, () => undefined);
      const upstream: UpstreamResponse = await call.response;
      if (upstream.status === 421 && !streamBody && attempt === 1) {
        deps.metrics.redirects++;
        deps.routes.invalidate(path);
        call.cancel();
        log.info({ cell: cell.name }, 'cell does not own the path (421), learning again');
        continue;
      }
      if (decision.by === 'rule') deps.metrics.httpRuleRouted++;
      const details = {
        cell: cell.name,
        route: route.via,
        source: route.source,
        decided_by: decision.by,
        ...(decision.by === 'rule' ? { rule: ruleId } : {}),
        status: upstream.status,
      };
      log.debug(details, 'proxied');
      if (upstream.status === 404) {
        const delay = notFoundDelay(deps.notFoundDelayMs, deps.random);
        if (delay > 0) await sleep(delay);
        if (res.destroyed) {
          call.cancel();
          return;
        }
      }
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
