// Original file: protos/topology_service/classify_service.proto

import type { ClassifyAction as _gitlab_cells_topology_service_ClassifyAction, ClassifyAction__Output as _gitlab_cells_topology_service_ClassifyAction__Output } from '../../../gitlab/cells/topology_service/ClassifyAction.js';
import type { ProxyInfo as _gitlab_cells_topology_service_ProxyInfo, ProxyInfo__Output as _gitlab_cells_topology_service_ProxyInfo__Output } from '../../../gitlab/cells/topology_service/ProxyInfo.js';
import type { Claim as _gitlab_cells_topology_service_types_v1_Claim, Claim__Output as _gitlab_cells_topology_service_types_v1_Claim__Output } from '../../../gitlab/cells/topology_service/types/v1/Claim.js';

export interface ClassifyResponse {
  'action'?: (_gitlab_cells_topology_service_ClassifyAction);
  'proxy'?: (_gitlab_cells_topology_service_ProxyInfo | null);
  /**
   * The claim of the request that decided (newest revision); unset for type/value requests.
   */
  'matched_claim'?: (_gitlab_cells_topology_service_types_v1_Claim | null);
}

export interface ClassifyResponse__Output {
  'action'?: (_gitlab_cells_topology_service_ClassifyAction__Output);
  'proxy'?: (_gitlab_cells_topology_service_ProxyInfo__Output);
  /**
   * The claim of the request that decided (newest revision); unset for type/value requests.
   */
  'matched_claim'?: (_gitlab_cells_topology_service_types_v1_Claim__Output);
}
