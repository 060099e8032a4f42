/**
 * @file `GET /journal` of the control API: `{entries, next}` (with `wait` a long-poll for at least
 * one new matching entry), or with `Accept: text/event-stream` the matching entries as server-sent
 * events (one `data:` line per entry, `id:` its seq), the kept ones after `since` first, then every
 * new one until the client goes away.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ControlBadRequest } from './control-errors.js';
import { type JournalFilter, type JournalStore, matches } from './journal-store.js';

/** The longest long-poll a client may ask for. */
const MAX_WAIT_MS = 60_000;
/** At most this many entries per answer; `next` then points at the last one given. */
const PAGE = 5_000;
const HEARTBEAT_MS = 15_000;

function nonNegativeInt(value: string | null, name: string): number | undefined {
  if (value === null || value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw ControlBadRequest(`${name} must be a non-negative integer`);
  return Number(value);
}

/** The filter and `wait` of a journal query string. */
export function journalQuery(url: URL): { filter: JournalFilter; waitMs: number } {
  const q = url.searchParams;
  const filter: JournalFilter = {};
  const cell = q.get('cell');
  if (cell) filter.cell = cell;
  const service = q.get('service');
  if (service) filter.service = service;
  const endpoint = q.get('endpoint');
  if (endpoint) filter.endpoint = endpoint;
  const since = nonNegativeInt(q.get('since'), 'since');
  if (since !== undefined) filter.since = since;
  const waitMs = Math.min(nonNegativeInt(q.get('wait'), 'wait') ?? 0, MAX_WAIT_MS);
  return { filter, waitMs };
}

export async function answerJournal(
  store: JournalStore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const { filter, waitMs } = journalQuery(url);
  if ((req.headers.accept ?? '').includes('text/event-stream')) {
    followJournal(store, filter, res);
    return;
  }
  const abort = new AbortController();
  res.once('close', () => abort.abort());
  const found = await store.poll(filter, waitMs, abort.signal);
  const entries = found.slice(0, PAGE);
  const last = entries.at(-1);
  // Entries after `next` that did not match need not be looked at again.
  const next = found.length > PAGE && last ? last.seq : Math.max(store.lastSeq, filter.since ?? 0);
  const body = JSON.stringify({ entries, next });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function followJournal(store: JournalStore, filter: JournalFilter, res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write(': journal\n\n');
  const send = (e: { seq: number }) => res.write(`id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`);
  for (const e of store.query(filter)) send(e);
  const live: JournalFilter = { ...filter, since: undefined };
  const stop = store.follow((e) => {
    if (matches(e, live)) send(e);
  });
  const beat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  beat.unref();
  res.once('close', () => {
    clearInterval(beat);
    stop();
  });
}
