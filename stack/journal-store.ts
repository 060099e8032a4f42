/**
 * @file The world's journal (`lib/contracts/world.ts` `JournalEntry`): every entry the services send
 * over their world channel gets the next `seq` and is appended as one NDJSON line to
 * `<data>/journal.ndjson`; the last `tailSize` entries stay in memory for queries, long-polls and
 * followers (the control API's `GET /journal`).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { JournalDraft, JournalEntry } from '../lib/contracts/world.js';

/** What `GET /journal?cell=&service=&since=&endpoint=` selects. */
export interface JournalFilter {
  /** A cell name; `null` selects the entries without a cell (Topology Service, control API). */
  cell?: string | null;
  service?: string;
  /** Only entries after this seq. */
  since?: number;
  /** A substring of `endpoint`. */
  endpoint?: string;
}

export function matches(entry: JournalEntry, filter: JournalFilter): boolean {
  if (filter.since !== undefined && entry.seq <= filter.since) return false;
  if (filter.cell !== undefined && entry.cell !== filter.cell) return false;
  if (filter.service !== undefined && entry.service !== filter.service) return false;
  return filter.endpoint === undefined || entry.endpoint.includes(filter.endpoint);
}

type Listener = (entry: JournalEntry) => void;

export class JournalStore {
  private readonly tail: JournalEntry[] = [];
  private readonly listeners = new Set<Listener>();
  private readonly out: WriteStream;
  private last = 0;

  constructor(
    readonly file: string,
    private readonly tailSize = 20_000,
  ) {
    // One journal per world: a data folder used again starts a new one (seq from 1 again).
    this.out = createWriteStream(file, { flags: 'w', mode: 0o600 });
    // A full disk must not stop the world: the in-memory tail still answers.
    this.out.on('error', () => undefined);
  }

  /** The seq of the last entry (0 before the first). */
  get lastSeq(): number {
    return this.last;
  }

  append(draft: JournalDraft): JournalEntry {
    const entry: JournalEntry = { seq: ++this.last, ...draft };
    this.out.write(`${JSON.stringify(entry)}\n`);
    this.tail.push(entry);
    if (this.tail.length > this.tailSize) this.tail.splice(0, this.tail.length - this.tailSize);
    for (const l of [...this.listeners]) l(entry);
    return entry;
  }

  /** The kept entries that match, oldest first, at most `limit`. */
  query(filter: JournalFilter, limit = 10_000): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (const e of this.tail) {
      if (!matches(e, filter)) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * What matches now; when nothing does, waits up to `waitMs` for the first entry that does
   * (a long-poll). `signal` ends the wait early (the client went away).
   */
  async poll(filter: JournalFilter, waitMs: number, signal?: AbortSignal): Promise<JournalEntry[]> {
    const now = this.query(filter);
    if (now.length > 0 || waitMs <= 0) return now;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const listener: Listener = (e) => {
        if (matches(e, filter)) done();
      };
      const timer = setTimeout(done, waitMs);
      this.listeners.add(listener);
      signal?.addEventListener('abort', done);
    });
    return this.query(filter);
  }

  /** Calls `listener` with every entry appended from now on; returns the unsubscribe function. */
  follow(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Flushes the file and closes it. */
  close(): Promise<void> {
    this.listeners.clear();
    return new Promise((resolve) => this.out.end(() => resolve()));
  }
}
