// Original file: protos/ssh.proto

import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from '../gitaly/Repository.js';

export interface SSHUploadPackRequest {
  /**
   * Only in the first message.
   */
  'repository'?: (_gitaly_Repository | null);
  /**
   * Never in the first message.
   */
  'stdin'?: (Buffer | Uint8Array | string);
  /**
   * "key=value" pairs passed to git as configuration.
   */
  'git_config_options'?: (string)[];
  /**
   * "version=1" or "version=2"; anything else means protocol v0.
   */
  'git_protocol'?: (string);
}

export interface SSHUploadPackRequest__Output {
  /**
   * Only in the first message.
   */
  'repository'?: (_gitaly_Repository__Output);
  /**
   * Never in the first message.
   */
  'stdin'?: (Buffer);
  /**
   * "key=value" pairs passed to git as configuration.
   */
  'git_config_options'?: (string)[];
  /**
   * "version=1" or "version=2"; anything else means protocol v0.
   */
  'git_protocol'?: (string);
}
