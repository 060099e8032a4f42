// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { UUID as _gitlab_cells_topology_service_types_v1_UUID, UUID__Output as _gitlab_cells_topology_service_types_v1_UUID__Output } from '../../../../../gitlab/cells/topology_service/types/v1/UUID.js';
import type { Long } from '@grpc/proto-loader';

export interface CommitUpdateRequest {
  'cell_id'?: (number | string | Long);
  'lease_uuid'?: (_gitlab_cells_topology_service_types_v1_UUID | null);
}

export interface CommitUpdateRequest__Output {
  'cell_id'?: (string);
  'lease_uuid'?: (_gitlab_cells_topology_service_types_v1_UUID__Output);
}
