// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { Record as _gitlab_cells_topology_service_claims_v1_Record, Record__Output as _gitlab_cells_topology_service_claims_v1_Record__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Record.js';

export interface ListRecordsResponse {
  'records'?: (_gitlab_cells_topology_service_claims_v1_Record)[];
  'truncated'?: (boolean);
}

export interface ListRecordsResponse__Output {
  'records'?: (_gitlab_cells_topology_service_claims_v1_Record__Output)[];
  'truncated'?: (boolean);
}
