import { ControlArgumentError, type ControlHandler, onControl } from '../../lib/world-channel.js';
import type { ClaimSync } from '../claim-sync.js';
import { moveOrganization } from '../org-move.js';
import type { TopologyModel } from '../topology.js';
import { parseFaultSpec } from './faults.js';
import type { CiJobTokens } from './job-tokens.js';
import { isMaintenanceReason, type MaintenanceReason } from './maintenance.js';
import type { RailsWorld } from './rails-world.js';

/**
 * The `rails` control ops of a mock-cell process (README "Control ops"): each names the cell it is
 * for (`cell` of the request); a cell this process does not serve is an error.
 */

export interface ControlDeps {
  world: RailsWorld;
  model: TopologyModel;
  /** The cells this process serves. */
  cells: readonly string[];
  claims?: ClaimSync | undefined;
  jobTokens: CiJobTokens;
}

const bad = (message: string): never => {
  throw new ControlArgumentError(message);
};

function stringArg(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v === '') bad(`${name} must be a non-empty string`);
  return v as string;
}

const STATES = { 'time-bounded': 'migration', indefinite: 'isolation', off: undefined } as const;

function maintenanceOp(d: ControlDeps): ControlHandler {
  return (args) => {
    const organization = stringArg(args, 'organization');
    const org = d.model.organization(organization) ?? bad(`unknown organization ${organization}`);
    const state = args.state;
    if (typeof state !== 'string' || !(state in STATES))
      bad('state must be "time-bounded", "indefinite" or "off"');
    const reason = args.reason ?? STATES[state as keyof typeof STATES];
    if (reason !== undefined && !isMaintenanceReason(reason))
      bad('reason must be one of migration, isolation, incident, billing, legal');
    d.world.maintenance.set(
      org.path,
      state === 'off' ? { state: 'active' } : { state: 'maintenance', reason: reason as MaintenanceReason },
    );
    const refusal = d.world.maintenance.refusal(org.path);
    return { organization: org.path, ...d.world.maintenance.status(org.path), refusal: refusal ?? null };
  };
}

function moveOp(d: ControlDeps): ControlHandler {
  return async (args) => {
    const organization = stringArg(args, 'organization');
    const cell = stringArg(args, 'cell');
    if (!d.model.organization(organization)) bad(`unknown organization ${organization}`);
    if (!d.model.cell(cell)) bad(`unknown cell ${cell}`);
    const result = await moveOrganization(d.model, organization, cell);
    if (d.claims) await d.claims.afterMove(result);
    return result;
  };
}

function jobTokenOp(d: ControlDeps): ControlHandler {
  return (args, cell) => {
    const username = stringArg(args, 'user');
    const projectPath = stringArg(args, 'project');
    const user = d.model.userByUsername(username) ?? bad(`unknown user ${username}`);
    const project = d.model.projectByPath(projectPath) ?? bad(`unknown project ${projectPath}`);
    return { token: d.jobTokens.issue(cell as string, user, project) };
  };
}

/** The handlers by op name; each gets the request's cell, checked to be one this process serves. */
export function railsControlHandlers(d: ControlDeps): Record<string, ControlHandler> {
  const ops: Record<string, ControlHandler> = {
    fault: (args, cell) => ({ id: d.world.faultsOf(cell as string).add(parseFaultSpec(args)).id }),
    faults: (_args, cell) => ({ faults: d.world.faultsOf(cell as string).list() }),
    clearFaults: (_args, cell) => ({ cleared: d.world.faultsOf(cell as string).clear() }),
    reset: (_args, cell) => {
      const cleared = d.world.faultsOf(cell as string).clear();
      d.world.maintenance.clear();
      return { cleared, maintenance: 'off' };
    },
    maintenance: maintenanceOp(d),
    moveOrganization: moveOp(d),
    issueJobToken: jobTokenOp(d),
  };
  const checked: Record<string, ControlHandler> = {};
  for (const [op, handler] of Object.entries(ops)) {
    checked[op] = (args, cell) => {
      if (cell === undefined) bad('a rails control request names its cell');
      if (!d.cells.includes(cell as string))
        throw new Error(`unknown cell ${cell}: this mock cell serves ${d.cells.join(', ')}`);
      return handler(args, cell);
    };
  }
  return checked;
}

/** Registers the `rails` ops on the world channel (only a process with a supervisor gets requests). */
export function registerRailsControls(d: ControlDeps): void {
  for (const [op, handler] of Object.entries(railsControlHandlers(d))) onControl('rails', op, handler);
}
