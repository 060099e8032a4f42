// Original file: protos/ssh.proto

import type { ExitStatus as _gitaly_ExitStatus, ExitStatus__Output as _gitaly_ExitStatus__Output } from '../gitaly/ExitStatus.js';

export interface SSHUploadArchiveResponse {
  'stdout'?: (Buffer | Uint8Array | string);
  'stderr'?: (Buffer | Uint8Array | string);
  'exit_status'?: (_gitaly_ExitStatus | null);
}

export interface SSHUploadArchiveResponse__Output {
  'stdout'?: (Buffer);
  'stderr'?: (Buffer);
  'exit_status'?: (_gitaly_ExitStatus__Output);
}
