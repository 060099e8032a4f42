// Original file: protos/smarthttp.proto

import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from '../gitaly/Repository.js';

export interface PostReceivePackRequest {
  /**
   * Only in the first message.
   */
  'repository'?: (_gitaly_Repository | null);
  /**
   * Never in the first message.
   */
  'data'?: (Buffer | Uint8Array | string);
  /**
   * Required: "user-<id>" or "key-<id>".
   */
  'gl_id'?: (string);
  'gl_repository'?: (string);
  'gl_username'?: (string);
  'git_protocol'?: (string);
  'git_config_options'?: (string)[];
}

export interface PostReceivePackRequest__Output {
  /**
   * Only in the first message.
   */
  'repository'?: (_gitaly_Repository__Output);
  /**
   * Never in the first message.
   */
  'data'?: (Buffer);
  /**
   * Required: "user-<id>" or "key-<id>".
   */
  'gl_id'?: (string);
  'gl_repository'?: (string);
  'gl_username'?: (string);
  'git_protocol'?: (string);
  'git_config_options'?: (string)[];
}
