import type { status } from '@grpc/grpc-js';
import {
  LIMIT_ERROR_RETRY_AFTER_SECONDS,
  limitErrorStatusDetails,
  STATUS_DETAILS_KEY,
} from '../lib/gitaly/limit-error.js';

/**
 * A limiter failure with its `gitaly.LimitError` status detail (the detail Workhorse's
 * `handleLimitErr` looks for to write its busy answer): `RESOURCE_EXHAUSTED` as Gitaly's limiter
 * answers (the `resource-exhausted` fault), `UNAVAILABLE` as Workhorse's own test builds it (the
 * `limit-error` fault). The message is the limiter's text.
 */
export function limitErrorFailure(
  code: status,
  message: string,
): { code: status; message: string; trailers: Record<string, Buffer> } {
  const details = limitErrorStatusDetails(code, message, LIMIT_ERROR_RETRY_AFTER_SECONDS);
  return { code, message, trailers: { [STATUS_DETAILS_KEY]: details } };
}
