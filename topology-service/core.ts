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
import { ClaimStore } from './store.js';

export class TopologyCore {
  readonly cells: CellDirectory;
  readonly store: ClaimStore;
  readonly claims: ClaimService;
  /** False once stopping: readiness fails, the rest still answers until the listeners close. */
  ready = true;

  constructor(
    readonly config: Pick<TopologyConfig, 'cells' | 'acceptClaimField4' | 'claimConflict' | 'cfAccess'>,
    readonly logger: Logger,
  ) {
    this.cells = new CellDirectory(config.cells);
    this.store = new ClaimStore({ conflict: config.claimConflict });
    this.claims = new ClaimService(this.cells, this.store);
  }

  classify(req: ClassifyRequest__Output): Classified {
    return classify(req, {
      cells: this.cells,
      store: this.store,
      acceptClaimField4: this.config.acceptClaimField4,
    });
  }

  getCells(): GetCellsResponse {
    return { cells: this.cells.all.map(cellInfo) };
  }
}
