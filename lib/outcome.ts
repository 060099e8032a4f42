import { isAppError } from './errors.js';

/**
 * How a request or an SSH session ended, the one classification of every access line and of the
 * `outcome` label of every service's counters (bridge tunnels, router SSH sessions):
 *
 * - `ok`: done as asked (a git command that exits non-zero by itself is still `ok`);
 * - `policy`: refused by a rule or for the client's input (denied, not found, unknown command);
 * - `client-gone`: cancelled because the client left, or the service stopped it while shutting down;
 * - `system`: our fault or a dependency's (a cell, Rails, Gitaly): an incident, logged at error.
 *
 * Only `system` counts against the error SLI, as gitlab-shell's `trackError`
 * (`internal/sshd/connection.go`) leaves policy refusals and cancellations out.
 */
export const OUTCOMES = ['ok', 'policy', 'client-gone', 'system'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The outcome of a failure: `cancelled` wins; an AppError is `policy` unless it is a `system` one. */
export function failureOutcome(err: unknown, cancelled = false): Exclude<Outcome, 'ok'> {
  if (cancelled) return 'client-gone';
  return isAppError(err) && !err.system ? 'policy' : 'system';
}

/** True for the outcomes that count against the error SLI. */
export function isSliFailure(outcome: Outcome): boolean {
  return outcome === 'system';
}
