/**
 * Organization maintenance as GitLab keeps it (`Organizations::Stateful`): an organization is
 * `active`, `maintenance_initialization` (draining) or `maintenance`, with a `maintenance_reason`.
 * While it is in either maintenance state, git, LFS and the API of its projects are refused: a
 * time-bounded reason (`migration`, `incident`) with `503` + `Retry-After: 60`, the others
 * (`isolation`, `billing`, `legal`) with `403` (gitlab!251067). One store per process: every cell
 * of the process sees the same state, as they share the model.
 */

export const MAINTENANCE_REASONS = ['migration', 'isolation', 'incident', 'billing', 'legal'] as const;
export type MaintenanceReason = (typeof MAINTENANCE_REASONS)[number];
export const TIME_BOUNDED_REASONS: ReadonlySet<string> = new Set(['migration', 'incident']);
export const MAINTENANCE_RETRY_AFTER_SECONDS = 60;

export const TEMPORARILY_UNAVAILABLE = 'This organization is temporarily unavailable due to maintenance.';
export const UNAVAILABLE = 'This organization is unavailable.';

export type OrganizationState = 'active' | 'maintenance_initialization' | 'maintenance';

export interface OrganizationStatus {
  state: OrganizationState;
  reason?: MaintenanceReason;
}

/** How a request to an organization in maintenance is refused. */
export interface MaintenanceRefusal {
  status: 503 | 403;
  message: string;
  retryAfter?: number;
}

export type TransitionEvent =
  | 'start_maintenance'
  | 'confirm_maintenance'
  | 'cancel_maintenance'
  | 'exit_maintenance';

/** From → to of each event (the state machine of `Organizations::Stateful`). */
const TRANSITIONS: Record<TransitionEvent, { from: OrganizationState; to: OrganizationState }> = {
  start_maintenance: { from: 'active', to: 'maintenance_initialization' },
  confirm_maintenance: { from: 'maintenance_initialization', to: 'maintenance' },
  cancel_maintenance: { from: 'maintenance_initialization', to: 'active' },
  exit_maintenance: { from: 'maintenance', to: 'active' },
};

export type TransitionResult = { ok: true } | { ok: false; message: string };

export function isMaintenanceReason(v: unknown): v is MaintenanceReason {
  return typeof v === 'string' && (MAINTENANCE_REASONS as readonly string[]).includes(v);
}

export class MaintenanceStore {
  readonly #orgs = new Map<string, OrganizationStatus>();

  status(orgPath: string): OrganizationStatus {
    return this.#orgs.get(orgPath.toLowerCase()) ?? { state: 'active' };
  }

  /** Sets the state directly (the `rails maintenance` control op). */
  set(orgPath: string, status: OrganizationStatus): void {
    if (status.state === 'active') this.#orgs.delete(orgPath.toLowerCase());
    else this.#orgs.set(orgPath.toLowerCase(), status);
  }

  /** One org_mover event; idempotent when the organization is already in the event's target state. */
  transition(orgPath: string, event: TransitionEvent, reason?: MaintenanceReason): TransitionResult {
    const now = this.status(orgPath);
    const { from, to } = TRANSITIONS[event];
    if (now.state === to) return { ok: true };
    if (now.state !== from)
      return { ok: false, message: `Cannot ${event.replace('_', ' ')}: the organization is ${now.state}` };
    this.set(
      orgPath,
      to === 'active'
        ? { state: to }
        : { state: to, ...((reason ?? now.reason) ? { reason: reason ?? now.reason } : {}) },
    );
    return { ok: true };
  }

  /** The refusal for requests to this organization's projects, or undefined when it is active. */
  refusal(orgPath: string): MaintenanceRefusal | undefined {
    const s = this.status(orgPath);
    if (s.state === 'active') return undefined;
    return s.reason !== undefined && TIME_BOUNDED_REASONS.has(s.reason)
      ? { status: 503, message: TEMPORARILY_UNAVAILABLE, retryAfter: MAINTENANCE_RETRY_AFTER_SECONDS }
      : { status: 403, message: UNAVAILABLE };
  }

  clear(): void {
    this.#orgs.clear();
  }
}
