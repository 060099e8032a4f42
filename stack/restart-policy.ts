/**
 * When the supervisor starts a dead service again: after 0.5 s, then twice as long after each
 * further death (1 s, 2 s, … at most 10 s), back to 0.5 s once the service has stayed up for 30 s.
 * After 8 deaths in a row without such a stable run the service is given up (the stack stops).
 */
export interface RestartPolicyOptions {
  firstDelayMs: number;
  maxDelayMs: number;
  /** Up this long (ms), a service's next death counts as the first again. */
  stableMs: number;
  /** Deaths in a row after which the service is not started again. */
  maxAttempts: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  firstDelayMs: 500,
  maxDelayMs: 10_000,
  stableMs: 30_000,
  maxAttempts: 8,
};

/** The next attempt of one service: its number (1 = first restart) and the delay before it. */
export interface RestartPlan {
  attempt: number;
  delayMs: number;
}

/** Deaths in a row per service, and the backoff they imply. */
export class RestartPolicy {
  private readonly deaths = new Map<string, number>();

  constructor(private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {}

  /**
   * A death of `name`, which had been up (ready) for `upMs` (0 when it never became ready): the
   * plan for its restart, or undefined when it is to be given up.
   */
  onDeath(name: string, upMs: number): RestartPlan | undefined {
    const { firstDelayMs, maxDelayMs, stableMs, maxAttempts } = this.options;
    const attempt = (upMs >= stableMs ? 0 : (this.deaths.get(name) ?? 0)) + 1;
    this.deaths.set(name, attempt);
    if (attempt > maxAttempts) return undefined;
    return { attempt, delayMs: Math.min(maxDelayMs, firstDelayMs * 2 ** (attempt - 1)) };
  }
}
