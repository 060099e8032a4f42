// Original file: protos/smarthttp.proto

import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from '../gitaly/Repository.js';

export interface InfoRefsRequest {
  'repository'?: (_gitaly_Repository | null);
  /**
   * "key=value" pairs passed to git as configuration.
   */
  'git_config_options'?: (string)[];
  'git_protocol'?: (string);
}

export interface InfoRefsRequest__Output {
  'repository'?: (_gitaly_Repository__Output);
  /**
   * "key=value" pairs passed to git as configuration.
   */
  'git_config_options'?: (string)[];
  'git_protocol'?: (string);
}
