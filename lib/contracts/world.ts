/**
 * @file The world channel: how the stack's supervisor (`stack/`) and the services it starts talk
 * besides their logs. The supervisor spawns every service with a Node IPC channel; over it a service
 * sends **journal entries** (what it received) and answers **control requests** (faults, canned
 * answers, clock skew). The control HTTP API of the world (`stack/`, listed in stack.json) and the
 * journal it serves are built on these messages. A service started without a channel (by hand, in a
 * container) journals nothing and has no control surface.
 */

/** Which service of a cell (or of the world) received a request. */
export type JournalService = 'rails' | 'bridge' | 'gitaly' | 'topology-service' | 'control';

/**
 * One request a service received, as the journal keeps it (one NDJSON line per entry). Secrets are
 * never in it: `Authorization`, tokens, cookies and passwords are `"[redacted]"`; a JWT's claims are
 * decoded into `jwt` (its signature is not).
 */
export interface JournalEntry {
  /** Position in the world's journal, from 1; given by the supervisor when it appends the entry. */
  seq: number;
  /** ISO 8601 time the request arrived, with milliseconds. */
  time: string;
  /** The cell name, or null for the Topology Service and the control API. */
  cell: string | null;
  service: JournalService;
  /** Geo site name when the service belongs to a Geo secondary site (else absent). */
  site?: string;
  /** HTTP: `POST /api/v4/internal/allowed` (path without query); gRPC: `/gitaly.SSHService/SSHReceivePack`. */
  endpoint: string;
  /** HTTP method, absent for gRPC. */
  method?: string;
  /** The query string's parameters (HTTP only; secrets redacted). */
  query?: Record<string, string>;
  /** Routing-relevant request headers by lower-case name (secrets redacted). */
  headers?: Record<string, string>;
  /** Routing-relevant fields of the request body or message (action, project, claim, repository…). */
  fields?: Record<string, unknown>;
  /** Decoded claims of the JWT the request carried, by header name (e.g. `gitlab-shell-api-request`). */
  jwt?: Record<string, Record<string, unknown>>;
  /** HTTP status, or the gRPC status code name (`OK`, `UNAVAILABLE`, …). */
  status: number | string;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  /** Set when a control fault decided the answer (`{kind, ...}` of the fault that fired). */
  fault?: Record<string, unknown>;
}

/** What a service sends before `seq` is known. */
export type JournalDraft = Omit<JournalEntry, 'seq'>;

/**
 * Control targets. `rails` and `gitaly` and `bridge` take the cell; `world` ops (clock skew) go to
 * every service. The ops and their arguments are documented where each service implements them and
 * in README "Use as a test fixture".
 */
export type ControlTarget = 'topology-service' | 'rails' | 'gitaly' | 'bridge' | 'world';

export interface ControlRequest {
  type: 'control';
  /** Unique per supervisor; the answer repeats it. */
  id: number;
  target: ControlTarget;
  /** The cell a `rails`/`gitaly`/`bridge` request is for. */
  cell?: string;
  op: string;
  args: Record<string, unknown>;
}

export interface ControlAnswer {
  type: 'control-answer';
  id: number;
  ok: boolean;
  /** On success: what the op returns (JSON). */
  result?: unknown;
  /** On failure: a message for the caller (a bad argument, an unknown op or cell). */
  error?: string;
}

export interface JournalMessage {
  type: 'journal';
  entry: JournalDraft;
}

/** Messages from the supervisor to a service. */
export type ToService = ControlRequest;
/** Messages from a service to the supervisor. */
export type FromService = ControlAnswer | JournalMessage;
