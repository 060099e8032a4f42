// Original file: protos/topology_service/classify_service.proto

import type { ClassifyType as _gitlab_cells_topology_service_ClassifyType, ClassifyType__Output as _gitlab_cells_topology_service_ClassifyType__Output } from '../../../gitlab/cells/topology_service/ClassifyType.js';
import type { Claim as _gitlab_cells_topology_service_types_v1_Claim, Claim__Output as _gitlab_cells_topology_service_types_v1_Claim__Output } from '../../../gitlab/cells/topology_service/types/v1/Claim.js';

export interface ClassifyRequest {
  'type'?: (_gitlab_cells_topology_service_ClassifyType);
  'value'?: (string);
  'claim'?: (_gitlab_cells_topology_service_types_v1_Claim | null);
  /**
   * Newest revision: an ordered fallback chain; the first claim some cell holds wins.
   */
  'claims'?: (_gitlab_cells_topology_service_types_v1_Claim)[];
  /**
   * Middle revision only (reserved in the newest).
   */
  'classification_key'?: "claim";
}

export interface ClassifyRequest__Output {
  'type'?: (_gitlab_cells_topology_service_ClassifyType__Output);
  'value'?: (string);
  'claim'?: (_gitlab_cells_topology_service_types_v1_Claim__Output);
  /**
   * Newest revision: an ordered fallback chain; the first claim some cell holds wins.
   */
  'claims'?: (_gitlab_cells_topology_service_types_v1_Claim__Output)[];
  /**
   * Middle revision only (reserved in the newest).
   */
  'classification_key'?: "claim";
}
