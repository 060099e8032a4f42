import { status } from '@grpc/grpc-js';
import type { SshCallResult } from '../lib/gitaly/index.js';

/** gitlab-shell's words for a Gitaly that cannot be reached. */
export const GITALY_UNAVAILABLE_MESSAGE =
  'The git server, Gitaly, is not available at this time. Please contact your administrator.';
/** gitlab-shell's words for Gitaly's concurrency limiter refusing the call. */
export const GITALY_OVERLOADED_MESSAGE = 'GitLab is currently unable to handle this request due to load.';

/**
 * What the user reads (framed mode's error frame, shown by the router as `ERROR: …`) when a Gitaly
 * call fails after the `200`: gitlab-shell's texts for an unavailable or overloaded Gitaly, a hint
 * naming the setting when `stream` mode meets a Gitaly without `SSHUploadPack`, else Gitaly's own.
 */
export function gitalyFailureMessage(
  result: SshCallResult,
  uploadPackMode: 'sidechannel' | 'stream' | undefined,
): string {
  switch (result.code) {
    case status.UNAVAILABLE:
      return GITALY_UNAVAILABLE_MESSAGE;
    case status.RESOURCE_EXHAUSTED:
      return GITALY_OVERLOADED_MESSAGE;
    case status.UNIMPLEMENTED:
      if (uploadPackMode === 'stream') {
        return (
          'Gitaly does not implement SSHUploadPack (removed in Gitaly 17.8), which the bridge uses in ' +
          'gitalyUploadPack "stream" mode; set gitalyUploadPack to "sidechannel"'
        );
      }
      return result.details || 'UNIMPLEMENTED';
    default:
      return result.details || (status[result.code] ?? String(result.code));
  }
}
