// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { Bucket as _gitlab_cells_topology_service_claims_v1_Bucket, Bucket__Output as _gitlab_cells_topology_service_claims_v1_Bucket__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Bucket.js';
import type { Claim as _gitlab_cells_topology_service_types_v1_Claim, Claim__Output as _gitlab_cells_topology_service_types_v1_Claim__Output } from '../../../../../gitlab/cells/topology_service/types/v1/Claim.js';

export interface GetRecordRequest {
  'bucket'?: (_gitlab_cells_topology_service_claims_v1_Bucket | null);
  'claim'?: (_gitlab_cells_topology_service_types_v1_Claim | null);
  '_claim'?: "claim";
}

export interface GetRecordRequest__Output {
  'bucket'?: (_gitlab_cells_topology_service_claims_v1_Bucket__Output);
  'claim'?: (_gitlab_cells_topology_service_types_v1_Claim__Output);
  '_claim'?: "claim";
}
