// Original file: protos/topology_service/claims/v1/messages.proto

import type { UUID as _gitlab_cells_topology_service_types_v1_UUID, UUID__Output as _gitlab_cells_topology_service_types_v1_UUID__Output } from '../../../../../gitlab/cells/topology_service/types/v1/UUID.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../../../../google/protobuf/Timestamp.js';

export interface LeaseRecord {
  'uuid'?: (_gitlab_cells_topology_service_types_v1_UUID | null);
  'created_at'?: (_google_protobuf_Timestamp | null);
  'updated_at'?: (_google_protobuf_Timestamp | null);
}

export interface LeaseRecord__Output {
  'uuid'?: (_gitlab_cells_topology_service_types_v1_UUID__Output);
  'created_at'?: (_google_protobuf_Timestamp__Output);
  'updated_at'?: (_google_protobuf_Timestamp__Output);
}
