/**
 * @file What both transports serve: the configured cells, the claim store and the decisions on
 * them. gRPC (`grpc.ts`) and REST (`rest.ts`) only translate to and from it.
 */
import type { ClassifyRequest__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { GetCellsResponse } from '../lib/generated/gitlab/cells/topology_service/GetCellsResponse.js';
import type { Logger } from '../lib/logger.js';
import { CellDirectory, cellInfo } from './cells.js';
import { ClaimService } from './claim-service.js';
import { type Classified, classify } from './classify.js';
import type { TopologyConfig } from './config.js';
import { Injected, TopologyError } from './errors.js';
import type { TopologyJournal } from './journal.js';
import { ClaimStore } from './store.js';
import { TopologyWorld } from './world.js';

/** A Classify as the world left it: the answer, and the fault when a control op decided it. */
export interface WorldClassified {
  response: Classified['response'];
  /** Undefined when a canned answer (not a cell of the configuration) decided. */
  classified: Classified | undefined;
  fault: Record<string, unknown> | undefined;
}

export class TopologyCore {
  readonly cells: CellDirectory;
  readonly store: ClaimStore;
  readonly claims: ClaimService;
  /** False once stopping: readiness fails, the rest still answers until the listeners close. */
  ready = true;
  /** Canned answers, failures, latency and request shapes a world's control API set. */
  readonly world = new TopologyWorld();

  constructor(
    readonly config: Pick<TopologyConfig, 'cells' | 'acceptClaimField4' | 'claimConflict' | 'cfAccess'>,
    readonly logger: Logger,
    /** Where every call is journaled (the world channel in `main.ts`; nothing by default). */
    readonly journal: TopologyJournal = () => undefined,
  ) {
    this.cells = new CellDirectory(config.cells);
    this.store = new ClaimStore({ conflict: config.claimConflict });
    this.claims = new ClaimService(this.cells, this.store);
  }

  classify(req: ClassifyRequest__Output, acceptClaimField4 = this.config.acceptClaimField4): Classified {
    return classify(req, { cells: this.cells, store: this.store, acceptClaimField4 });
  }

  /** Classify as both transports serve it: the world's latency and faults first, then the rules. */
  async classifyInWorld(req: ClassifyRequest__Output): Promise<WorldClassified> {
    await this.world.delay();
    const latency = this.world.latencyFault;
    const verdict = this.world.decide(req, this.config.acceptClaimField4);
    const fault = verdict.fault ?? latency;
    if (verdict.response) return { response: verdict.response, classified: undefined, fault };
    let classified: Classified;
    try {
      classified = this.classify(req, verdict.acceptClaimField4);
    } catch (err) {
      // Field 4 ignored by `requestShape`: the failure is the world's doing.
      if (verdict.fault && err instanceof TopologyError)
        throw Injected(err.grpcCode, err.message, verdict.fault);
      throw err;
    }
    return { response: classified.response, classified, fault };
  }

  getCells(): GetCellsResponse {
    return { cells: this.cells.all.map(cellInfo) };
  }
}
