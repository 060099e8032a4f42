import { randomBytes } from 'node:crypto';

/**
 * Browser sessions, shared by every cell of the process (one store, as the seed's shared session
 * Redis), but a cell honours only the sessions of its own cell: the id is Rails' session id with
 * the cell prefix, `cell-<cell id>-<32 hex>` (gitlab sessions/cache_store.rb), and the router sends a
 * request carrying it to that cell (SESSION_PREFIX).
 */

export const SESSION_COOKIE = '_gitlab_session';
/** Newest sessions kept; the oldest is dropped beyond this. */
export const SESSION_CAPACITY = 10_000;

export interface Session {
  id: string;
  userId: number;
  /** The cell whose prefix the id carries: the only cell that honours it. */
  cellId: number;
  createdAt: string;
}

const SESSION_ID = /^cell-(\d+)-[0-9a-f]{32}$/;

export class SessionStore {
  readonly #sessions = new Map<string, Session>();

  create(userId: number, cellId: number): Session {
    const session: Session = {
      id: `cell-${cellId}-${randomBytes(16).toString('hex')}`,
      userId,
      cellId,
      createdAt: new Date().toISOString(),
    };
    this.#sessions.set(session.id, session);
    for (const oldest of this.#sessions.keys()) {
      if (this.#sessions.size <= SESSION_CAPACITY) break;
      this.#sessions.delete(oldest);
    }
    return session;
  }

  get(id: string): Session | undefined {
    return SESSION_ID.test(id) ? this.#sessions.get(id) : undefined;
  }

  delete(id: string): boolean {
    return this.#sessions.delete(id);
  }
}
