// Original file: protos/topology_service/claims/v1/messages.proto

import type { UUID as _gitlab_cells_topology_service_types_v1_UUID, UUID__Output as _gitlab_cells_topology_service_types_v1_UUID__Output } from '../../../../../gitlab/cells/topology_service/types/v1/UUID.js';
import type { Metadata as _gitlab_cells_topology_service_claims_v1_Metadata, Metadata__Output as _gitlab_cells_topology_service_claims_v1_Metadata__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/Metadata.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../../../../google/protobuf/Timestamp.js';
import type { Long } from '@grpc/proto-loader';

// Original file: protos/topology_service/claims/v1/messages.proto

export const _gitlab_cells_topology_service_claims_v1_Record_Status = {
  UNSPECIFIED: 'UNSPECIFIED',
  ACTIVE: 'ACTIVE',
  LEASE_CREATING: 'LEASE_CREATING',
  LEASE_DESTROYING: 'LEASE_DESTROYING',
} as const;

export type _gitlab_cells_topology_service_claims_v1_Record_Status =
  | 'UNSPECIFIED'
  | 0
  | 'ACTIVE'
  | 1
  | 'LEASE_CREATING'
  | 2
  | 'LEASE_DESTROYING'
  | 3

export type _gitlab_cells_topology_service_claims_v1_Record_Status__Output = typeof _gitlab_cells_topology_service_claims_v1_Record_Status[keyof typeof _gitlab_cells_topology_service_claims_v1_Record_Status]

export interface Record {
  'uuid'?: (_gitlab_cells_topology_service_types_v1_UUID | null);
  'metadata'?: (_gitlab_cells_topology_service_claims_v1_Metadata | null);
  'cell_id'?: (number | string | Long);
  'status'?: (_gitlab_cells_topology_service_claims_v1_Record_Status);
  'lease_uuid'?: (_gitlab_cells_topology_service_types_v1_UUID | null);
  'created_at'?: (_google_protobuf_Timestamp | null);
  'updated_at'?: (_google_protobuf_Timestamp | null);
  '_lease_uuid'?: "lease_uuid";
}

export interface Record__Output {
  'uuid'?: (_gitlab_cells_topology_service_types_v1_UUID__Output);
  'metadata'?: (_gitlab_cells_topology_service_claims_v1_Metadata__Output);
  'cell_id'?: (string);
  'status'?: (_gitlab_cells_topology_service_claims_v1_Record_Status__Output);
  'lease_uuid'?: (_gitlab_cells_topology_service_types_v1_UUID__Output);
  'created_at'?: (_google_protobuf_Timestamp__Output);
  'updated_at'?: (_google_protobuf_Timestamp__Output);
  '_lease_uuid'?: "lease_uuid";
}
