/** A measurement that either produced a value or failed with a message (never silently). */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export interface Failure {
  what: string;
  error: string;
}

/** Collects every failure of the run; each one is printed the moment it happens. */
export class FailureLog {
  readonly failures: Failure[] = [];

  record(what: string, err: unknown): string {
    const error = err instanceof Error ? err.message : String(err);
    this.failures.push({ what, error });
    process.stderr.write(`\n✗ FAILED: ${what}: ${error}\n\n`);
    return error;
  }

  /** Runs `fn`; a throw becomes a failed outcome (recorded and printed). */
  async attempt<T>(what: string, fn: () => Promise<T>): Promise<Outcome<T>> {
    try {
      return { ok: true, value: await fn() };
    } catch (err) {
      return { ok: false, error: this.record(what, err) };
    }
  }
}

export function okValue<T>(o: Outcome<T> | undefined): T | undefined {
  return o?.ok ? o.value : undefined;
}
