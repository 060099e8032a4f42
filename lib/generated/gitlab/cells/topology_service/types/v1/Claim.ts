// Original file: protos/topology_service/types/v1/claim.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One claim: exactly one member is set.
 */
export interface Claim {
  /**
   * A top-level namespace path ("gitlab-org", never "gitlab-org/gitlab").
   */
  'route'?: (string);
  'organization_path'?: (string);
  'redirect_route'?: (string);
  'username'?: (string);
  'email'?: (string);
  'project_id'?: (number | string | Long);
  'namespace_id'?: (number | string | Long);
  'gpg_key'?: (string);
  'ssh_key'?: (string);
  'user_id'?: (number | string | Long);
  'organization_id'?: (number | string | Long);
  'service_desk_custom_email'?: (string);
  'gpg_key_fingerprint'?: (string);
  /**
   * 14 was invite_email in an earlier revision; it is gone.
   * SHA-256 of the key blob, unpadded standard base64 (43 characters), no "SHA256:" prefix.
   */
  'ssh_key_fingerprint'?: (string);
  'snippet_id'?: (number | string | Long);
  'pages_domain'?: (string);
  'pages_unique_domain'?: (string);
  'claim'?: "route"|"organization_path"|"redirect_route"|"username"|"email"|"project_id"|"namespace_id"|"gpg_key"|"ssh_key"|"user_id"|"organization_id"|"service_desk_custom_email"|"gpg_key_fingerprint"|"ssh_key_fingerprint"|"snippet_id"|"pages_domain"|"pages_unique_domain";
}

/**
 * One claim: exactly one member is set.
 */
export interface Claim__Output {
  /**
   * A top-level namespace path ("gitlab-org", never "gitlab-org/gitlab").
   */
  'route'?: (string);
  'organization_path'?: (string);
  'redirect_route'?: (string);
  'username'?: (string);
  'email'?: (string);
  'project_id'?: (string);
  'namespace_id'?: (string);
  'gpg_key'?: (string);
  'ssh_key'?: (string);
  'user_id'?: (string);
  'organization_id'?: (string);
  'service_desk_custom_email'?: (string);
  'gpg_key_fingerprint'?: (string);
  /**
   * 14 was invite_email in an earlier revision; it is gone.
   * SHA-256 of the key blob, unpadded standard base64 (43 characters), no "SHA256:" prefix.
   */
  'ssh_key_fingerprint'?: (string);
  'snippet_id'?: (string);
  'pages_domain'?: (string);
  'pages_unique_domain'?: (string);
  'claim'?: "route"|"organization_path"|"redirect_route"|"username"|"email"|"project_id"|"namespace_id"|"gpg_key"|"ssh_key"|"user_id"|"organization_id"|"service_desk_custom_email"|"gpg_key_fingerprint"|"ssh_key_fingerprint"|"snippet_id"|"pages_domain"|"pages_unique_domain";
}
