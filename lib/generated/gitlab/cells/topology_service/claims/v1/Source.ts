// Original file: protos/topology_service/claims/v1/messages.proto


// Original file: protos/topology_service/claims/v1/messages.proto

export const _gitlab_cells_topology_service_claims_v1_Source_Type = {
  UNSPECIFIED: 'UNSPECIFIED',
  RAILS_TABLE_USERS: 'RAILS_TABLE_USERS',
  RAILS_TABLE_EMAILS: 'RAILS_TABLE_EMAILS',
  RAILS_TABLE_ROUTES: 'RAILS_TABLE_ROUTES',
  RAILS_TABLE_PROJECTS: 'RAILS_TABLE_PROJECTS',
  RAILS_TABLE_NAMESPACES: 'RAILS_TABLE_NAMESPACES',
  RAILS_TABLE_ORGANIZATIONS: 'RAILS_TABLE_ORGANIZATIONS',
  RAILS_TABLE_REDIRECT_ROUTES: 'RAILS_TABLE_REDIRECT_ROUTES',
  RAILS_TABLE_GPG_KEYS: 'RAILS_TABLE_GPG_KEYS',
  RAILS_TABLE_KEYS: 'RAILS_TABLE_KEYS',
  RAILS_TABLE_SERVICE_DESK_SETTINGS: 'RAILS_TABLE_SERVICE_DESK_SETTINGS',
  RAILS_TABLE_MEMBERS: 'RAILS_TABLE_MEMBERS',
  RAILS_TABLE_SNIPPETS: 'RAILS_TABLE_SNIPPETS',
  RAILS_TABLE_PAGES_DOMAINS: 'RAILS_TABLE_PAGES_DOMAINS',
  RAILS_TABLE_PROJECT_SETTINGS: 'RAILS_TABLE_PROJECT_SETTINGS',
} as const;

export type _gitlab_cells_topology_service_claims_v1_Source_Type =
  | 'UNSPECIFIED'
  | 0
  | 'RAILS_TABLE_USERS'
  | 1
  | 'RAILS_TABLE_EMAILS'
  | 2
  | 'RAILS_TABLE_ROUTES'
  | 3
  | 'RAILS_TABLE_PROJECTS'
  | 4
  | 'RAILS_TABLE_NAMESPACES'
  | 5
  | 'RAILS_TABLE_ORGANIZATIONS'
  | 6
  | 'RAILS_TABLE_REDIRECT_ROUTES'
  | 7
  | 'RAILS_TABLE_GPG_KEYS'
  | 8
  | 'RAILS_TABLE_KEYS'
  | 9
  | 'RAILS_TABLE_SERVICE_DESK_SETTINGS'
  | 10
  | 'RAILS_TABLE_MEMBERS'
  | 11
  | 'RAILS_TABLE_SNIPPETS'
  | 12
  | 'RAILS_TABLE_PAGES_DOMAINS'
  | 13
  | 'RAILS_TABLE_PROJECT_SETTINGS'
  | 14

export type _gitlab_cells_topology_service_claims_v1_Source_Type__Output = typeof _gitlab_cells_topology_service_claims_v1_Source_Type[keyof typeof _gitlab_cells_topology_service_claims_v1_Source_Type]

/**
 * The Rails row the claim comes from.
 */
export interface Source {
  'type'?: (_gitlab_cells_topology_service_claims_v1_Source_Type);
  'rails_primary_key_id'?: (Buffer | Uint8Array | string);
}

/**
 * The Rails row the claim comes from.
 */
export interface Source__Output {
  'type'?: (_gitlab_cells_topology_service_claims_v1_Source_Type__Output);
  'rails_primary_key_id'?: (Buffer);
}
