import { createHmac } from 'node:crypto';
import { signingNowSeconds } from './clock.js';

/**
 * Signing the two HS256 JWTs of GitLab's internal traffic (see `jwt.ts`, which also verifies them),
 * with node:crypto only: the receive-pack hooks are a process per push and sign one token per Rails
 * call, and loading jose costs them 30–150 ms of start-up on this machine.
 */
export const SHELL_HEADER = 'gitlab-shell-api-request';
export const WORKHORSE_HEADER = 'gitlab-workhorse-api-request';
export const SHELL_ISSUER = 'gitlab-shell';
export const WORKHORSE_ISSUER = 'gitlab-workhorse';
export const SHELL_TTL_SECONDS = 60;

export type JwtKey = Uint8Array;

/** Turns a secret string into key bytes exactly as GitLab does (whitespace trimmed). */
export function jwtKey(secret: string): JwtKey {
  return new TextEncoder().encode(secret.trim());
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

function signHs256(key: JwtKey, claims: Record<string, string | number>): string {
  const input = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** A Shell JWT valid `ttlSeconds` from `now` (gitlab-shell's 60 s unless a router sets `shellJwtTtlSeconds`). */
export async function signShellJwt(
  key: JwtKey,
  glId?: string,
  now = signingNowSeconds(),
  ttlSeconds = SHELL_TTL_SECONDS,
): Promise<string> {
  const claims: Record<string, string | number> = {};
  if (glId) claims.gl_id = glId;
  return signHs256(key, { ...claims, iss: SHELL_ISSUER, iat: now, exp: now + ttlSeconds });
}

export async function signWorkhorseJwt(key: JwtKey, now = signingNowSeconds()): Promise<string> {
  return signHs256(key, { iss: WORKHORSE_ISSUER, iat: now });
}
