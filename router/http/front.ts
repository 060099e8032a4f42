import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { appendForwardedFor, endToEndHeaders } from '../../lib/http-headers.js';
import { lingerInsteadOfDestroySoon } from '../../lib/lingering-close.js';
import type { Logger } from '../../lib/logger.js';
import type { CellDirectory } from '../cells/directory.js';
import type { UpstreamCall, UpstreamResponse } from '../cells/transport.js';
import type { RouterMetrics } from '../metrics.js';
import type { Classification, Classifier } from '../routing/classifier.js';
import { evaluate } from '../rules/engine.js';
import { parseCookies, RULE_ACTION_HEADER, RULE_TYPE_HEADER, ruleHeaders } from '../rules/http.js';
import type { Ruleset } from '../rules/load.js';
import type { RestClassifier } from '../topology/rest-classify.js';
import { decideCell, type RouteDecision, type RoutingRuleResult } from './decide.js';
import { claimPath } from './path-claim.js';
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
  /** `topology` mode: `classify` rules are answered by the Topology Service's REST endpoint. */
  topology?: RestClassifier | undefined;
}

/**
 * Not forwarded to the cell besides the hop-by-hop headers (`lib/http-headers.ts`): `host` (sent as
 * `X-Forwarded-Host`) and the headers only the router sets (a client's own values are dropped).
 */
const NOT_FORWARDED = new Set(['host', RULE_ACTION_HEADER.toLowerCase(), RULE_TYPE_HEADER.toLowerCase()]);
const NOT_RELAYED = new Set(['host']);

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
  for (const [name, value] of Object.entries(endToEndHeaders(req.headers, NOT_FORWARDED))) {
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['x-forwarded-for'] = appendForwardedFor(out['x-forwarded-for'], req.socket.remoteAddress ?? '');
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  out['x-forwarded-proto'] = 'http';
  out['x-request-id'] = requestId;
  for (const [name, value] of Object.entries(extra)) out[name.toLowerCase()] = value;
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  return endToEndHeaders(headers, NOT_RELAYED);
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * An answer of the router itself, in GitLab's JSON error shape. A request body is not read to its
 * end: the connection closes once the answer is out, so a body that never ends costs nothing.
 */
function answer(res: ServerResponse, status: number, message: string, requestId: string): void {
  const withBody = hasBody(res.req) && !res.req.complete;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId };
  if (withBody) {
    // Node closes the connection after the answer (`Connection: close`): lingering, so the reset
    // of a close with the body still arriving cannot destroy the answer before the client reads it.
    headers.connection = 'close';
    lingerInsteadOfDestroySoon(res.req.socket);
  }
  res.req.resume();
  res.writeHead(status, headers);
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

/** One request on the front, as far as it has been decided. */
interface FrontRequest {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** Path and query as the client sent them. */
  target: string;
  path: string;
  method: string;
  log: Logger;
  rule: RoutingRuleResult;
  streamBody: boolean;
}

/** One attempt at the cell: where it went and what the cell answered. */
interface Sent {
  call: UpstreamCall;
  upstream: UpstreamResponse;
  route: Classification;
  decision: RouteDecision;
}

async function proxy(deps: HttpFrontDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const fr = screen(deps, req, res);
  if (!fr) return;
  let call: UpstreamCall | undefined;
  res.once('close', () => {
    if (!res.writableFinished) call?.cancel();
  });
  try {
    for (let attempt = 1; ; attempt++) {
      const sent = await send(deps, fr, (c) => {
        call = c;
      });
      if (sent.upstream.status === 421 && !fr.streamBody && attempt === 1) {
        deps.metrics.redirects++;
        deps.routes.invalidate(fr.path);
        sent.call.cancel();
        fr.log.info({ cell: sent.decision.cell.name }, 'cell does not own the path (421), learning again');
        continue;
      }
      await relay(deps, fr, sent);
      return;
    }
  } catch (err) {
    fr.log.warn({ err }, 'cell unreachable');
    call?.cancel();
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Bad Gateway\n');
    } else res.destroy();
  }
}

/** Steps 1 and 2: the path check and the rules. Answers the request itself and returns undefined when they refuse. */
function screen(deps: HttpFrontDeps, req: IncomingMessage, res: ServerResponse): FrontRequest | undefined {
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' && header !== '' ? header : randomUUID();
  const target = req.url ?? '/';
  const path = target.split('?')[0] || '/';
  const method = req.method ?? 'GET';
  const log = deps.log.child({ request_id: requestId, method, path });
  deps.metrics.httpRequests++;

  const verdict = target.startsWith('/') ? checkPublicPath(path) : 'malformed';
  if (verdict === 'malformed') return void answer(res, 400, '400 Bad Request', requestId);
  if (verdict === 'internal') {
    deps.metrics.httpInternalBlocked++;
    log.info('internal API requested on the public HTTP front, answered 404');
    return void answer(res, 404, '404 Not Found', requestId);
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
    return void answer(res, rule.status, `400 Bad Request: ${rule.message}`, requestId);
  }
  return { req, res, requestId, target, path, method, log, rule, streamBody: hasBody(req) };
}

/** Step 3 and the request half of step 4: classify, decide, open the call, stream the body. */
async function send(
  deps: HttpFrontDeps,
  fr: FrontRequest,
  opened: (call: UpstreamCall) => void,
): Promise<Sent> {
  const route = await classifyPath(deps, fr);
  const decision =
    (await deps.topology?.decide(fr.rule, route, { requestId: fr.requestId, log: fr.log })) ??
    decideCell(fr.rule, route, deps.cells);
  if (decision.ignoredRule)
    fr.log.warn({ rule: ruleIdOf(fr.rule) }, `routing rule not followed: ${decision.ignoredRule}`);
  const extra = decision.by === 'rule' ? ruleHeaders(fr.rule) : {};
  const call = await deps.cells.transport(decision.cell).open({
    method: fr.method,
    path: fr.target,
    headers: requestHeaders(fr.req, fr.requestId, extra),
    streamBody: fr.streamBody,
  });
  opened(call);
  if (fr.streamBody) pipeline(fr.req, call.body, () => undefined);
  return { call, upstream: await call.response, route, decision };
}

/**
 * Step 3's classification. In `topology` mode as the HTTP Router's path router: a reserved first
 * segment is not classified (the rules, else the legacy cell), a format suffix is stripped once,
 * `/users/sign_in?login=<u>` is classified as `/<u>` (`path-claim.ts`).
 */
function classifyPath(deps: HttpFrontDeps, fr: FrontRequest): Promise<Classification> {
  const ctx = { requestId: fr.requestId, log: fr.log };
  if (!deps.topology) return deps.routes.classify(fr.path, fr.method, ctx);
  const path = claimPath(fr.target);
  if (path === undefined)
    return Promise.resolve({ cell: deps.cells.legacy, via: 'fallback', source: 'fallback' });
  return deps.routes.classify(path, fr.method, ctx);
}

/** The response half of step 4: the optional 404 delay, then the cell's answer streamed back. */
async function relay(deps: HttpFrontDeps, fr: FrontRequest, sent: Sent): Promise<void> {
  const { call, upstream, route, decision } = sent;
  if (decision.by === 'rule') deps.metrics.httpRuleRouted++;
  fr.log.debug(
    {
      cell: decision.cell.name,
      route: route.via,
      source: route.source,
      decided_by: decision.by,
      ...(decision.by === 'rule' ? { rule: ruleIdOf(fr.rule) } : {}),
      status: upstream.status,
    },
    'proxied',
  );
  if (upstream.status === 404) {
    const delay = notFoundDelay(deps.notFoundDelayMs, deps.random);
    if (delay > 0) await sleep(delay);
    if (fr.res.destroyed) {
      call.cancel();
      return;
    }
  }
  fr.res.writeHead(upstream.status, responseHeaders(upstream.headers));
  pipeline(upstream.body, fr.res, (err) => {
    if (err) {
      call.cancel();
      fr.log.debug({ err }, 'response stream ended early');
    }
  });
}

function ruleIdOf(rule: RoutingRuleResult): string | undefined {
  return rule.kind === 'none' ? undefined : rule.ruleId;
}
