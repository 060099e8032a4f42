// Original file: protos/ssh.proto

import type { ExitStatus as _gitaly_ExitStatus, ExitStatus__Output as _gitaly_ExitStatus__Output } from '../gitaly/ExitStatus.js';

export interface SSHUploadPackResponse {
  'stdout'?: (Buffer | Uint8Array | string);
  'stderr'?: (Buffer | Uint8Array | string);
  /**
   * Absent on success.
   */
  'exit_status'?: (_gitaly_ExitStatus | null);
}

export interface SSHUploadPackResponse__Output {
  'stdout'?: (Buffer);
  'stderr'?: (Buffer);
  /**
   * Absent on success.
   */
  'exit_status'?: (_gitaly_ExitStatus__Output);
}
