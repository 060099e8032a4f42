// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { _gitlab_cells_topology_service_claims_v1_Source_Type, _gitlab_cells_topology_service_claims_v1_Source_Type__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Source.js';
import type { _gitlab_cells_topology_service_claims_v1_Bucket_Type, _gitlab_cells_topology_service_claims_v1_Bucket_Type__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Bucket.js';
import type { ClaimType as _gitlab_cells_topology_service_types_v1_ClaimType, ClaimType__Output as _gitlab_cells_topology_service_types_v1_ClaimType__Output } from '../../../../../gitlab/cells/topology_service/types/v1/ClaimType.js';
import type { Long } from '@grpc/proto-loader';

export interface ListRecordsRequest {
  'cell_id'?: (number | string | Long);
  'source_type'?: (_gitlab_cells_topology_service_claims_v1_Source_Type);
  'bucket_types'?: (_gitlab_cells_topology_service_claims_v1_Bucket_Type)[];
  'source_id_gt'?: (Buffer | Uint8Array | string);
  'source_id_lte'?: (Buffer | Uint8Array | string);
  'claim_types'?: (_gitlab_cells_topology_service_types_v1_ClaimType)[];
}

export interface ListRecordsRequest__Output {
  'cell_id'?: (string);
  'source_type'?: (_gitlab_cells_topology_service_claims_v1_Source_Type__Output);
  'bucket_types'?: (_gitlab_cells_topology_service_claims_v1_Bucket_Type__Output)[];
  'source_id_gt'?: (Buffer);
  'source_id_lte'?: (Buffer);
  'claim_types'?: (_gitlab_cells_topology_service_types_v1_ClaimType__Output)[];
}
