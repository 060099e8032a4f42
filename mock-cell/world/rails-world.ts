import type { JournalDraft } from '../../lib/contracts/world.js';
import { FaultTable } from './faults.js';
import { MaintenanceStore } from './maintenance.js';

/**
 * What a world's control API may change in a mock-cell process and where its journal goes: the
 * faults of each cell, the maintenance state of organizations (shared by every cell, as the model
 * is) and the journal sink (the world channel; none when the process has no supervisor).
 */
export class RailsWorld {
  readonly maintenance = new MaintenanceStore();
  readonly #faults = new Map<string, FaultTable>();

  constructor(readonly sink?: ((entry: JournalDraft) => void) | undefined) {}

  faultsOf(cell: string): FaultTable {
    let table = this.#faults.get(cell);
    if (!table) {
      table = new FaultTable(cell);
      this.#faults.set(cell, table);
    }
    return table;
  }

  /** Sends an entry to the sink; a failing sink never reaches the request. */
  record(entry: () => JournalDraft): void {
    if (!this.sink) return;
    try {
      this.sink(entry());
    } catch {
      // Journaling must never break a request.
    }
  }
}
