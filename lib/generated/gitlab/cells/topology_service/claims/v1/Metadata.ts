// Original file: protos/topology_service/claims/v1/messages.proto

import type { Bucket as _gitlab_cells_topology_service_claims_v1_Bucket, Bucket__Output as _gitlab_cells_topology_service_claims_v1_Bucket__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Bucket.js';
import type { Subject as _gitlab_cells_topology_service_claims_v1_Subject, Subject__Output as _gitlab_cells_topology_service_claims_v1_Subject__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Subject.js';
import type { Source as _gitlab_cells_topology_service_claims_v1_Source, Source__Output as _gitlab_cells_topology_service_claims_v1_Source__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Source.js';
import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from '../../../../../google/protobuf/Any.js';
import type { Claim as _gitlab_cells_topology_service_types_v1_Claim, Claim__Output as _gitlab_cells_topology_service_types_v1_Claim__Output } from '../../../../../gitlab/cells/topology_service/types/v1/Claim.js';

export interface Metadata {
  'bucket'?: (_gitlab_cells_topology_service_claims_v1_Bucket | null);
  'subject'?: (_gitlab_cells_topology_service_claims_v1_Subject | null);
  'source'?: (_gitlab_cells_topology_service_claims_v1_Source | null);
  'user_data'?: (_google_protobuf_Any | null);
  /**
   * The claim itself (newer cells send it beside the bucket).
   */
  'claim'?: (_gitlab_cells_topology_service_types_v1_Claim | null);
  '_user_data'?: "user_data";
  '_claim'?: "claim";
}

export interface Metadata__Output {
  'bucket'?: (_gitlab_cells_topology_service_claims_v1_Bucket__Output);
  'subject'?: (_gitlab_cells_topology_service_claims_v1_Subject__Output);
  'source'?: (_gitlab_cells_topology_service_claims_v1_Source__Output);
  'user_data'?: (_google_protobuf_Any__Output);
  /**
   * The claim itself (newer cells send it beside the bucket).
   */
  'claim'?: (_gitlab_cells_topology_service_types_v1_Claim__Output);
  '_user_data'?: "user_data";
  '_claim'?: "claim";
}
