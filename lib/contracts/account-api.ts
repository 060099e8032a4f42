/**
 * @file The account endpoints of GitLab's internal API (`lib/api/internal/base.rb`) as gitlab-shell's
 * `internal/gitlabnet/*` clients call them: produced by the mock cell, read by the router's account
 * commands. Every answer is `200` with `success` and, when false, a `message` the user reads.
 */

/** Who asks: GitLab Shell sends the key id (or a user id in SSH-certificate mode). */
export interface AccountActorJson {
  key_id?: string;
  user_id?: number;
  /** A certificate login's GitLab username. */
  username?: string;
}

/** `POST /personal_access_token`. `expires_at` is `YYYY-MM-DD`. */
export interface PersonalAccessTokenRequestJson extends AccountActorJson {
  name: string;
  scopes: string[];
  expires_at?: string;
}

export interface PersonalAccessTokenJson {
  success: boolean;
  token?: string;
  scopes?: string[];
  expires_at?: string | null;
  message?: string;
}

/** `POST /two_factor_recovery_codes`. */
export interface RecoveryCodesJson {
  success: boolean;
  recovery_codes?: string[];
  message?: string;
}

/** `POST /two_factor_manual_otp_check` (with `otp_attempt`) and `/two_factor_push_otp_check`. */
export interface OtpCheckRequestJson extends AccountActorJson {
  otp_attempt?: string;
}

export interface OtpCheckJson {
  success: boolean;
  message?: string;
}

/** `POST /lfs_authenticate`: `project` is the path as the user typed it. */
export interface LfsAuthenticateRequestJson extends AccountActorJson {
  operation: 'download' | 'upload';
  project: string;
}

/** `Gitlab::LfsToken#authentication_payload`. */
export interface LfsAuthenticateJson {
  username: string;
  lfs_token: string;
  repository_http_path: string;
  expires_in: number;
}

/** `Gitlab::LfsToken::DEFAULT_EXPIRE_TIME`: 2 hours. */
export const LFS_TOKEN_EXPIRES_IN = 7200;
