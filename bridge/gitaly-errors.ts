import { status } from '@grpc/grpc-js';
import type { SshCallResult } from '../lib/gitaly/index.js';

/** gitlab-shell's words for a Gitaly that cannot be reached. */
export const GITALY_UNAVAILABLE_MESSAGE =
  'The git server, Gitaly, is not available at this time. Please contact your administrator.';
/** gitlab-shell's words for Gitaly's concurrency limiter refusing the call. */
export const GITALY_OVERLOADED_MESSAGE = 'GitLab is currently unable to handle this request due to load.';

/**
 * grpc-js's words for a call whose connection failed under it on the client side (the backchannel's
 * yamux session or socket gone, e.g. Gitaly killed mid-clone). grpc-js reports that as `INTERNAL`
 * unless the socket error was ECONNRESET/ETIMEDOUT; grpc-go, which gitlab-shell and Workhorse use,
 * reports a lost transport as `UNAVAILABLE`, so the user gets the same text as for any unreachable Gitaly.
 */
const CLIENT_TRANSPORT_FAILURE = /^Received RST_STREAM with code \d+ triggered by internal client error: /;

/** The status as grpc-go would report it: a transport lost on the client side is `UNAVAILABLE`. */
export function asGrpcGoStatus(result: SshCallResult): SshCallResult {
  if (result.code === status.INTERNAL && CLIENT_TRANSPORT_FAILURE.test(result.details))
    return { ...result, code: status.UNAVAILABLE };
  return result;
}

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
