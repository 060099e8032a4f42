// Original file: protos/topology_service/claims/v1/messages.proto

import type { Long } from '@grpc/proto-loader';

// Original file: protos/topology_service/claims/v1/messages.proto

export const _gitlab_cells_topology_service_claims_v1_Subject_Type = {
  UNSPECIFIED: 'UNSPECIFIED',
  ORGANIZATION: 'ORGANIZATION',
  NAMESPACE: 'NAMESPACE',
  PROJECT: 'PROJECT',
  USER: 'USER',
} as const;

export type _gitlab_cells_topology_service_claims_v1_Subject_Type =
  | 'UNSPECIFIED'
  | 0
  | 'ORGANIZATION'
  | 1
  | 'NAMESPACE'
  | 2
  | 'PROJECT'
  | 3
  | 'USER'
  | 4

export type _gitlab_cells_topology_service_claims_v1_Subject_Type__Output = typeof _gitlab_cells_topology_service_claims_v1_Subject_Type[keyof typeof _gitlab_cells_topology_service_claims_v1_Subject_Type]

/**
 * What owns the claim in Rails.
 */
export interface Subject {
  'type'?: (_gitlab_cells_topology_service_claims_v1_Subject_Type);
  'id'?: (number | string | Long);
}

/**
 * What owns the claim in Rails.
 */
export interface Subject__Output {
  'type'?: (_gitlab_cells_topology_service_claims_v1_Subject_Type__Output);
  'id'?: (string);
}
