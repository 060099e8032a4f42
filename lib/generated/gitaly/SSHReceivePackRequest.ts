// Original file: protos/ssh.proto

import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from '../gitaly/Repository.js';

export interface SSHReceivePackRequest {
  'repository'?: (_gitaly_Repository | null);
  'stdin'?: (Buffer | Uint8Array | string);
  /**
   * "user-<id>" or "key-<id>"; required.
   */
  'gl_id'?: (string);
  'gl_repository'?: (string);
  'gl_username'?: (string);
  'git_protocol'?: (string);
  'git_config_options'?: (string)[];
}

export interface SSHReceivePackRequest__Output {
  'repository'?: (_gitaly_Repository__Output);
  'stdin'?: (Buffer);
  /**
   * "user-<id>" or "key-<id>"; required.
   */
  'gl_id'?: (string);
  'gl_repository'?: (string);
  'gl_username'?: (string);
  'git_protocol'?: (string);
  'git_config_options'?: (string)[];
}
