/**
 * In-memory record of the calls Gitaly hooks made (`/allowed` with gl_repository, `/pre_receive`,
 * `/post_receive`), so end-to-end tests can see what arrived (e.g. push options). Bounded: only the
 * newest `capacity` calls are kept.
 */
export interface HookCall {
  /** ISO time the call arrived. */
  at: string;
  endpoint: 'allowed' | 'pre_receive' | 'post_receive';
  /** HTTP status the cell answered with. */
  status: number;
  /** The request body as received. */
  body: unknown;
}

export const HOOK_LOG_CAPACITY = 200;

export class HookLog {
  readonly #calls: HookCall[] = [];

  constructor(private readonly capacity = HOOK_LOG_CAPACITY) {}

  record(endpoint: HookCall['endpoint'], status: number, body: unknown): void {
    this.#calls.push({ at: new Date().toISOString(), endpoint, status, body });
    if (this.#calls.length > this.capacity) this.#calls.splice(0, this.#calls.length - this.capacity);
  }

  /** Oldest first. */
  calls(): readonly HookCall[] {
    return [...this.#calls];
  }
}
