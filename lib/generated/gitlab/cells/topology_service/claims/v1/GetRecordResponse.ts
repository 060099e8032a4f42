// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { Record as _gitlab_cells_topology_service_claims_v1_Record, Record__Output as _gitlab_cells_topology_service_claims_v1_Record__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Record.js';
import type { CellInfo as _gitlab_cells_topology_service_CellInfo, CellInfo__Output as _gitlab_cells_topology_service_CellInfo__Output } from '../../../../../gitlab/cells/topology_service/CellInfo.js';

export interface GetRecordResponse {
  'record'?: (_gitlab_cells_topology_service_claims_v1_Record | null);
  'cell_info'?: (_gitlab_cells_topology_service_CellInfo | null);
  '_cell_info'?: "cell_info";
}

export interface GetRecordResponse__Output {
  'record'?: (_gitlab_cells_topology_service_claims_v1_Record__Output);
  'cell_info'?: (_gitlab_cells_topology_service_CellInfo__Output);
  '_cell_info'?: "cell_info";
}
