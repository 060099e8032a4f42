// Original file: protos/topology_service/claims/v1/messages.proto


// Original file: protos/topology_service/claims/v1/messages.proto

export const _gitlab_cells_topology_service_claims_v1_Bucket_Type = {
  UNSPECIFIED: 'UNSPECIFIED',
  ROUTES: 'ROUTES',
  ORGANIZATION_PATH: 'ORGANIZATION_PATH',
  REDIRECT_ROUTES: 'REDIRECT_ROUTES',
  USERNAMES: 'USERNAMES',
  EMAILS: 'EMAILS',
  PROJECT_IDS: 'PROJECT_IDS',
  NAMESPACE_IDS: 'NAMESPACE_IDS',
  GPG_KEYS: 'GPG_KEYS',
  SSH_KEYS: 'SSH_KEYS',
  USER_IDS: 'USER_IDS',
  ORGANIZATION_IDS: 'ORGANIZATION_IDS',
  SERVICE_DESK_CUSTOM_EMAILS: 'SERVICE_DESK_CUSTOM_EMAILS',
  GPG_KEY_FINGERPRINTS: 'GPG_KEY_FINGERPRINTS',
  SSH_KEY_FINGERPRINTS: 'SSH_KEY_FINGERPRINTS',
  SNIPPET_IDS: 'SNIPPET_IDS',
  PAGES_DOMAINS: 'PAGES_DOMAINS',
  PAGES_UNIQUE_DOMAINS: 'PAGES_UNIQUE_DOMAINS',
} as const;

export type _gitlab_cells_topology_service_claims_v1_Bucket_Type =
  | 'UNSPECIFIED'
  | 0
  | 'ROUTES'
  | 1
  | 'ORGANIZATION_PATH'
  | 2
  | 'REDIRECT_ROUTES'
  | 3
  | 'USERNAMES'
  | 4
  | 'EMAILS'
  | 5
  | 'PROJECT_IDS'
  | 6
  | 'NAMESPACE_IDS'
  | 7
  | 'GPG_KEYS'
  | 8
  | 'SSH_KEYS'
  | 9
  | 'USER_IDS'
  | 10
  | 'ORGANIZATION_IDS'
  | 11
  | 'SERVICE_DESK_CUSTOM_EMAILS'
  | 12
  | 'GPG_KEY_FINGERPRINTS'
  | 13
  | 'SSH_KEY_FINGERPRINTS'
  | 15
  | 'SNIPPET_IDS'
  | 16
  | 'PAGES_DOMAINS'
  | 17
  | 'PAGES_UNIQUE_DOMAINS'
  | 18

export type _gitlab_cells_topology_service_claims_v1_Bucket_Type__Output = typeof _gitlab_cells_topology_service_claims_v1_Bucket_Type[keyof typeof _gitlab_cells_topology_service_claims_v1_Bucket_Type]

/**
 * Where a claim is kept: its kind and its value ("gitlab-org", "42").
 */
export interface Bucket {
  'type'?: (_gitlab_cells_topology_service_claims_v1_Bucket_Type);
  'value'?: (string);
}

/**
 * Where a claim is kept: its kind and its value ("gitlab-org", "42").
 */
export interface Bucket__Output {
  'type'?: (_gitlab_cells_topology_service_claims_v1_Bucket_Type__Output);
  'value'?: (string);
}
