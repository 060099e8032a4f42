import type { Metadata } from '@grpc/grpc-js';
import { checkGitalyAuth } from '../lib/gitaly-auth.js';
import { PermissionDenied, Unauthenticated } from './errors.js';

/** Gitaly's per-call token check on the `authorization` metadata; throws with Gitaly's wording. */
export function authorize(metadata: Metadata, token: string): void {
  const values = metadata.get('authorization');
  const header = values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
  const result = checkGitalyAuth(header, token);
  if (result === 'unauthenticated') throw Unauthenticated('authentication required');
  if (result === 'permission-denied') throw PermissionDenied('permission denied');
}
