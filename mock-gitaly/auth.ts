import type { Metadata } from '@grpc/grpc-js';
import { checkGitalyAuth } from '../lib/gitaly-auth.js';
import { PermissionDenied, Unauthenticated } from './errors.js';

/** Calls whose token was checked before they waited in the concurrency queue (`authorizeEarly`). */
const checkedBeforeQueue = new WeakSet<Metadata>();

function verdict(metadata: Metadata, token: string) {
  const values = metadata.get('authorization');
  const header = values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
  return checkGitalyAuth(header, token);
}

/**
 * The token checked before the concurrency limiter, as Gitaly's auth interceptor runs before its
 * limit handler: true when it passed (the handler's `authorize` then does not check it again, so a
 * call is not refused for the seconds it waited in the queue); false leaves the refusal to the handler.
 */
export function authorizeEarly(metadata: Metadata, token: string): boolean {
  if (verdict(metadata, token) !== 'ok') return false;
  checkedBeforeQueue.add(metadata);
  return true;
}

/** Gitaly's per-call token check on the `authorization` metadata; throws with Gitaly's wording. */
export function authorize(metadata: Metadata, token: string): void {
  if (checkedBeforeQueue.has(metadata)) return;
  const result = verdict(metadata, token);
  if (result === 'unauthenticated') throw Unauthenticated('authentication required');
  if (result === 'permission-denied') throw PermissionDenied('permission denied');
}
