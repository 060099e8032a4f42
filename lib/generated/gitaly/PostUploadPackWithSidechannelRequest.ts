// Original file: protos/smarthttp.proto

import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from '../gitaly/Repository.js';

export interface PostUploadPackWithSidechannelRequest {
  'repository'?: (_gitaly_Repository | null);
  'git_config_options'?: (string)[];
  'git_protocol'?: (string);
}

export interface PostUploadPackWithSidechannelRequest__Output {
  'repository'?: (_gitaly_Repository__Output);
  'git_config_options'?: (string)[];
  'git_protocol'?: (string);
}
