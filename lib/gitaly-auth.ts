import { createHmac, timingSafeEqual } from 'node:crypto';
import { signingNowSeconds } from './clock.js';

/**
 * Gitaly's v2 per-RPC token: `authorization: Bearer v2.<hex hmac-sha256(token, ts)>.<ts>`,
 * valid for ±30 s around the server's clock.
 */
export const GITALY_TOKEN_VALIDITY_SECONDS = 30;

export function gitalyAuthHeader(token: string, now = signingNowSeconds()): string {
  const ts = String(now);
  const sig = createHmac('sha256', token).update(ts).digest('hex');
  return `Bearer v2.${sig}.${ts}`;
}

export type GitalyAuthResult = 'ok' | 'unauthenticated' | 'permission-denied';

/**
 * Checks an `authorization` value as Gitaly does: missing or unparsable → unauthenticated,
 * wrong signature or outside the validity window → permission denied.
 */
export function checkGitalyAuth(
  header: string | undefined,
  token: string,
  now = Math.floor(Date.now() / 1000),
): GitalyAuthResult {
  if (!header) return 'unauthenticated';
  const m = /^Bearer (.+)$/.exec(header);
  if (!m) return 'unauthenticated';
  const parts = (m[1] as string).split('.');
  if (parts.length !== 3) return 'unauthenticated';
  const [version, sigHex, ts] = parts as [string, string, string];
  if (version !== 'v2' || !/^[0-9a-f]+$/i.test(sigHex) || !/^\d+$/.test(ts)) return 'unauthenticated';
  const given = Buffer.from(sigHex, 'hex');
  const expected = createHmac('sha256', token).update(ts).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'permission-denied';
  if (Math.abs(now - Number(ts)) > GITALY_TOKEN_VALIDITY_SECONDS) return 'permission-denied';
  return 'ok';
}
