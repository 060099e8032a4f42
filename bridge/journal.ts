/**
 * @file The bridge's journal entries (`lib/contracts/world.ts`): one per request it receives, on
 * either listener and either HTTP version, tunnels, proxied requests and refusals alike (written
 * once the exchange is over; nothing here reads a body). Secrets redacted, the shell JWT's claims
 * decoded into `jwt`.
 */
import type { JournalDraft } from '../lib/contracts/world.js';
import { journalHeaders, journalJwts, journalQuery } from '../lib/journal-fields.js';
import type { Exchange } from './exchange.js';
import type { RouteMatch, Served } from './routes.js';

/** Which of the bridge's ports a request came on: `listen` or the shell endpoint (`shellListen`). */
export type ListenerName = 'main' | 'shell';

export interface BridgeJournal {
  cell: string | null;
  write(draft: JournalDraft): void;
  /** The listener whose port a connection's local address is. */
  listenerOf(localAddress: string | undefined, localPort: number | undefined): ListenerName;
}

/** Request headers the journal keeps (lower case). */
export const JOURNAL_HEADERS = [
  'git-protocol',
  'gitlab-shell-api-request',
  'gitlab-shell-body-framing',
  'gitlab-cells-response-framing',
  'content-type',
  'content-length',
  'x-forwarded-for',
  'x-request-id',
  'user-agent',
  'authorization',
];

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The fields of the access line the journal repeats (undefined ones left out). */
function servedFields(served: Served): Record<string, unknown> {
  const f = served.fields ?? {};
  const out: Record<string, unknown> = { outcome: served.outcome };
  for (const key of [
    'gl_id',
    'reason',
    'error_code',
    'grpc_code',
    'exit_status',
    'framed',
    'gitaly_transport',
    'body_end',
    'stdin_tail',
  ]) {
    if (f[key] !== undefined && !(f[key] instanceof Error)) out[key] = f[key];
  }
  return out;
}

export function journalRequest(
  journal: BridgeJournal,
  ex: Exchange,
  match: RouteMatch,
  served: Served,
  timing: { startedAt: Date; durationMs: number },
): void {
  const socket = ex.req.socket as { localAddress?: string; localPort?: number } | undefined;
  const url = new URL(ex.url, 'http://bridge.invalid');
  const query = journalQuery(url.searchParams);
  const jwt = journalJwts(ex.headers);
  journal.write({
    time: timing.startedAt.toISOString(),
    cell: journal.cell,
    service: 'bridge',
    endpoint: `${ex.req.method ?? 'GET'} ${match.path}`,
    method: ex.req.method ?? 'GET',
    ...(query ? { query } : {}),
    headers: journalHeaders(ex.headers, JOURNAL_HEADERS),
    fields: {
      listener: journal.listenerOf(socket?.localAddress, socket?.localPort),
      route: match.route.id,
      protocol: ex.protocol,
      ...match.params,
      ...servedFields(served),
    },
    ...(jwt ? { jwt } : {}),
    status: served.status ?? 0,
    durationMs: Math.round(timing.durationMs * 10) / 10,
    bytesIn: num(served.fields?.bytes_in),
    bytesOut: num(served.fields?.bytes_out),
  });
}
