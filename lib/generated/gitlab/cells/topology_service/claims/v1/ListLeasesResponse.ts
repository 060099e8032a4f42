// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { LeaseRecord as _gitlab_cells_topology_service_claims_v1_LeaseRecord, LeaseRecord__Output as _gitlab_cells_topology_service_claims_v1_LeaseRecord__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/LeaseRecord.js';
import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from '../../../../../google/protobuf/Any.js';

export interface ListLeasesResponse {
  'leases'?: (_gitlab_cells_topology_service_claims_v1_LeaseRecord)[];
  'next'?: (_google_protobuf_Any | null);
  '_next'?: "next";
}

export interface ListLeasesResponse__Output {
  'leases'?: (_gitlab_cells_topology_service_claims_v1_LeaseRecord__Output)[];
  'next'?: (_google_protobuf_Any__Output);
  '_next'?: "next";
}
