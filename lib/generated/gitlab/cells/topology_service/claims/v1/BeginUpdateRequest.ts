// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { Metadata as _gitlab_cells_topology_service_claims_v1_Metadata, Metadata__Output as _gitlab_cells_topology_service_claims_v1_Metadata__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Metadata.js';
import type { Long } from '@grpc/proto-loader';

export interface BeginUpdateRequest {
  'create_records'?: (_gitlab_cells_topology_service_claims_v1_Metadata)[];
  'destroy_records'?: (_gitlab_cells_topology_service_claims_v1_Metadata)[];
  'cell_id'?: (number | string | Long);
}

export interface BeginUpdateRequest__Output {
  'create_records'?: (_gitlab_cells_topology_service_claims_v1_Metadata__Output)[];
  'destroy_records'?: (_gitlab_cells_topology_service_claims_v1_Metadata__Output)[];
  'cell_id'?: (string);
}
