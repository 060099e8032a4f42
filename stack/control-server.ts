/**
 * @file The world's control API: HTTP on loopback, every request with `Authorization: Bearer
 * <token>` (`control-token.ts`; 401 otherwise). `GET /journal` (`journal-http.ts`), `GET /targets`,
 * `POST /control/<target>/<op>`, `POST /control/<target>/<cell>/<op>` (a JSON object of arguments)
 * → `200 {result}`, `400 {error, code}` when the service refused, `404` for an unknown target or
 * cell, `502` when no answer came; `POST /control/reset` resets every target. Every control call is
 * journaled (service `control`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControlTarget, JournalDraft } from '../lib/contracts/world.js';
import { type AppError, isAppError } from '../lib/errors.js';
import { readBodyLimited } from '../lib/streams.js';
import {
  ControlBadRequest,
  ControlMethodNotAllowed,
  ControlNotFound,
  ControlRefused,
  ControlUnanswered,
  ControlUnauthorized,
} from './control-errors.js';
import { bearerMatches } from './control-token.js';
import { answerJournal } from './journal-http.js';
import type { JournalStore } from './journal-store.js';
import type { RoutedAnswer, WorldRouter } from './world-router.js';

const TARGETS: readonly ControlTarget[] = ['topology-service', 'rails', 'gitaly', 'bridge', 'world'];
const CELL_TARGETS: ReadonlySet<ControlTarget> = new Set(['rails', 'gitaly', 'bridge']);
const MAX_BODY = 1024 * 1024;

export interface ControlServerDeps {
  token: string;
  journal: JournalStore;
  router: Pick<WorldRouter, 'control' | 'serves' | 'cellsOf'>;
}

interface Call {
  target: ControlTarget | 'reset';
  cell?: string;
  op: string;
}

function send(res: ServerResponse, status: number, value: unknown): number {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return Buffer.byteLength(body);
}

/** `/control/<target>[/<cell>]/<op>` → the call; `/control/reset` → every target's reset. */
export function parseControlPath(path: string): Call {
  const parts = path.split('/').slice(2).map(decodeURIComponent);
  if (parts.length === 1 && parts[0] === 'reset') return { target: 'reset', op: 'reset' };
  const target = parts[0] as ControlTarget;
  if (!TARGETS.includes(target)) throw ControlNotFound(`unknown control target ${JSON.stringify(parts[0])}`);
  if (parts.length === 2 && parts[1]) return { target, op: parts[1] };
  if (parts.length === 3 && parts[1] && parts[2] && CELL_TARGETS.has(target))
    return { target, cell: parts[1], op: parts[2] };
  throw ControlNotFound(`no such control route ${path} (POST /control/<target>[/<cell>]/<op>)`);
}

async function readArgs(req: IncomingMessage): Promise<{ args: Record<string, unknown>; bytes: number }> {
  const { body, truncated } = await readBodyLimited(req, MAX_BODY);
  if (truncated) throw ControlBadRequest(`the arguments are larger than ${MAX_BODY} bytes`);
  if (body.length === 0) return { args: {}, bytes: 0 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw ControlBadRequest('the body must be a JSON object of arguments');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw ControlBadRequest('the body must be a JSON object of arguments');
  return { args: parsed as Record<string, unknown>, bytes: body.length };
}

/** One failed answer decides the status: no answer → 502, a refusal → 400. */
function failure(answers: RoutedAnswer[]): AppError | undefined {
  const bad = answers.find((a) => a.unanswered) ?? answers.find((a) => !a.ok);
  if (!bad) return undefined;
  const where = bad.cell ? `${bad.service} (${bad.cell})` : bad.service;
  const message = `${where}: ${bad.error ?? 'refused'}`;
  return bad.unanswered ? ControlUnanswered(message) : ControlRefused(message);
}

const summary = (a: RoutedAnswer) => ({
  service: a.service,
  ...(a.cell ? { cell: a.cell } : {}),
  result: a.result,
});

async function runReset(router: ControlServerDeps['router']): Promise<unknown> {
  const targets = TARGETS.filter((t) => t !== 'world' && router.serves(t));
  const answers = (
    await Promise.all([
      ...targets.map(async (t) => (await router.control(t, undefined, 'reset', {})).map((a) => ({ t, a }))),
      (async () =>
        (await router.control('world', undefined, 'clockSkew', { ms: 0 })).map((a) => ({ t: 'world', a })))(),
    ])
  ).flat();
  // A target without a reset op has nothing to reset.
  const relevant = answers.filter(({ a }) => a.ok || !/unknown control op/.test(a.error ?? ''));
  const bad = failure(relevant.map(({ a }) => a));
  if (bad) throw bad;
  return relevant.map(({ t, a }) => ({ target: t, ...summary(a) }));
}

async function runControl(router: ControlServerDeps['router'], call: Call, args: Record<string, unknown>) {
  if (call.target === 'reset') return runReset(router);
  const { target, cell, op } = call;
  if (!router.serves(target, cell)) {
    const known = router.cellsOf(target);
    throw ControlNotFound(
      cell === undefined
        ? `no process of this world answers ${target}`
        : `no cell ${JSON.stringify(cell)} for ${target} (cells: ${known.join(', ') || 'none'})`,
    );
  }
  const answers = await router.control(target, cell, op, args);
  const bad = failure(answers);
  if (bad) throw bad;
  const single = target === 'topology-service' || cell !== undefined;
  return single && answers.length === 1 ? answers[0]?.result : answers.map(summary);
}

function journalCall(deps: ControlServerDeps, draft: Omit<JournalDraft, 'service' | 'time'>, start: number) {
  deps.journal.append({ time: new Date(start).toISOString(), service: 'control', ...draft });
}

async function handleControl(
  deps: ControlServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) {
  const start = Date.now();
  let call: Call | undefined;
  let args: Record<string, unknown> = {};
  let bytesIn = 0;
  let status = 200;
  let bytesOut = 0;
  try {
    if (req.method !== 'POST') throw ControlMethodNotAllowed('control calls are POST');
    call = parseControlPath(path);
    ({ args, bytes: bytesIn } = await readArgs(req));
    bytesOut = send(res, 200, { result: (await runControl(deps.router, call, args)) ?? null });
  } catch (err) {
    const e = isAppError(err) ? err : ControlBadRequest((err as Error).message);
    status = e.statusCode;
    bytesOut = send(res, status, { error: e.message, code: e.code });
  }
  journalCall(
    deps,
    {
      cell: call?.cell ?? null,
      endpoint: path,
      method: req.method ?? 'POST',
      fields: { target: call?.target ?? null, op: call?.op ?? null, args },
      status,
      durationMs: Date.now() - start,
      bytesIn,
      bytesOut,
    },
    start,
  );
}

function targets(router: ControlServerDeps['router']): Record<string, string[] | true> {
  const out: Record<string, string[] | true> = {};
  for (const t of TARGETS) {
    if (!router.serves(t)) continue;
    out[t] = CELL_TARGETS.has(t) ? router.cellsOf(t) : true;
  }
  return out;
}

async function route(deps: ControlServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://control');
  if (!bearerMatches(req.headers.authorization, deps.token))
    throw ControlUnauthorized('a valid Authorization: Bearer <control token> is required');
  if (url.pathname.startsWith('/control/')) return handleControl(deps, req, res, url.pathname);
  if (req.method !== 'GET') throw ControlMethodNotAllowed(`${req.method} ${url.pathname} is not a route`);
  if (url.pathname === '/journal') return answerJournal(deps.journal, req, res, url);
  if (url.pathname === '/targets') {
    send(res, 200, { targets: targets(deps.router), lastSeq: deps.journal.lastSeq });
    return;
  }
  throw ControlNotFound(`no route ${url.pathname}`);
}

/** The control API's server, not yet listening. */
export function buildControlServer(deps: ControlServerDeps): Server {
  return createServer((req, res) => {
    route(deps, req, res).catch((err: unknown) => {
      const e = isAppError(err) ? err : ControlBadRequest((err as Error).message);
      if (!res.headersSent) send(res, e.statusCode, { error: e.message, code: e.code });
      else res.destroy();
    });
  });
}

/** Listens on `host:port` (0: the OS picks) and resolves with the base URL. */
export function listenControlServer(server: Server, host = '127.0.0.1', port = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(`http://${host}:${(server.address() as AddressInfo).port}`);
    });
  });
}
