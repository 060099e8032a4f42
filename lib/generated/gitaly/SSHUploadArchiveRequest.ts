// Original file: protos/ssh.proto

import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from '../gitaly/Repository.js';

export interface SSHUploadArchiveRequest {
  'repository'?: (_gitaly_Repository | null);
  'stdin'?: (Buffer | Uint8Array | string);
}

export interface SSHUploadArchiveRequest__Output {
  'repository'?: (_gitaly_Repository__Output);
  'stdin'?: (Buffer);
}
