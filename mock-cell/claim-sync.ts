import type { Logger } from '../lib/logger.js';
import { type TopologyClients, topologyClients, updateClaims } from '../topology-service/client.js';
import { cellClaims, organizationClaims, userClaims } from './claims.js';
import type { OrganizationMove } from './org-move.js';
import type { TopologyModel } from './topology.js';

/**
 * The cells' side of the Topology Service's ClaimService: at start each served cell registers what it
 * holds (BeginUpdate + CommitUpdate), and after an organization move the new cell claims the
 * organization's path, routes and its users' claims, which takes them over from the old cell (the
 * service's `claimConflict: move`). The service keeps claims in memory only, so this is also how it
 * is rebuilt after a restart of the mock cell.
 */

const ATTEMPTS = 10;
const RETRY_MS = 300;
const DEADLINE_MS = 3000;

export class ClaimSync {
  readonly #clients: TopologyClients;
  readonly #model: TopologyModel;
  readonly #log: Logger;

  constructor(address: string, model: TopologyModel, log: Logger) {
    this.#clients = topologyClients(address);
    this.#model = model;
    this.#log = log.child({ topology_service: address });
  }

  /** Registers every claim of `cellName`, retrying while the service is not reachable yet. */
  async registerCell(cellName: string): Promise<boolean> {
    const cell = this.#model.cell(cellName);
    if (!cell) return false;
    const claims = cellClaims(this.#model, cellName);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        const lease = await updateClaims(this.#clients, cell.id, claims, [], { deadlineMs: DEADLINE_MS });
        this.#log.info({ cell: cellName, claims: claims.length, lease }, 'claims registered');
        return true;
      } catch (err) {
        this.#log.warn({ cell: cellName, attempt, err: (err as Error).message }, 'claim registration failed');
        if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    return false;
  }

  /** The new cell of a moved organization claims it (one attempt; the move itself is done). */
  async afterMove(move: OrganizationMove): Promise<boolean> {
    const cell = this.#model.cell(move.to);
    if (!cell) return false;
    const claims = [
      ...organizationClaims(this.#model, move.organization),
      ...userClaims(this.#model, move.organization),
    ];
    try {
      await updateClaims(this.#clients, cell.id, claims, [], { deadlineMs: DEADLINE_MS });
      this.#log.info({ organization: move.organization, cell: move.to, claims: claims.length }, 're-claimed');
      return true;
    } catch (err) {
      this.#log.error({ organization: move.organization, err: (err as Error).message }, 're-claim failed');
      return false;
    }
  }

  close(): void {
    this.#clients.close();
  }
}
