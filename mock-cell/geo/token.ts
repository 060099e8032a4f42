import { randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { signingNowSeconds } from '../../lib/clock.js';
import type { JwtKey } from '../../lib/jwt.js';

/**
 * The `GL-Geo` token of Geo's internal requests (GitLab `Gitlab::Geo::BaseRequest` /
 * `SignedData` to sign, `JwtRequestDecoder` to verify):
 * `Authorization: GL-Geo <access_key>:<JWT>`, the JWT HS256 with the signing node's
 * `secret_access_key`, expiring 1 minute after issue, its `data` claim a JSON string such as
 * `{"scope":"group/project","gl_id":"user-2"}`. The decoder looks the node up by access key,
 * verifies with 60 s of leeway (also on `iat`), and yields nothing for anything malformed or forged
 * (Rails then answers `401 Geo JWT authentication failed: Bad token`); an expired or not-yet-valid one
 * raises `InvalidSignatureTimeError` instead (`401 … Invalid signature time `).
 */
export const GEO_TOKEN_TYPE = 'GL-Geo';
export const GEO_TOKEN_TTL_SECONDS = 60;
export const GEO_TOKEN_LEEWAY_SECONDS = 60;

export interface GeoNodeKey {
  /** The site's name (for logs). */
  site: string;
  accessKey: string;
  secret: JwtKey;
}

/** What a Geo request is signed for: the repository path (no `.git`) and optionally the actor. */
export interface GeoRequestData {
  scope?: string;
  gl_id?: string;
  [key: string]: unknown;
}

export type GeoVerdict =
  | { ok: true; node: GeoNodeKey; data: GeoRequestData }
  | { ok: false; reason: 'no-node' | 'malformed' | 'invalid' | 'signature-time' };

/** ruby-jwt's `ExpiredSignature` / `ImmatureSignature`: `exp` or `nbf` outside the leeway. */
function isSignatureTimeError(err: unknown): boolean {
  return (
    err instanceof errors.JWTExpired ||
    (err instanceof errors.JWTClaimValidationFailed && err.claim === 'nbf')
  );
}

/** Rails' `geo_auth_attempt?`: the header's first word is `GL-Geo`. */
export function isGeoAuthAttempt(header: string | undefined): boolean {
  return header?.split(' ', 1)[0] === GEO_TOKEN_TYPE;
}

export async function signGeoToken(
  node: GeoNodeKey,
  data: GeoRequestData,
  now = signingNowSeconds(),
): Promise<string> {
  const jwt = await new SignJWT({ data: JSON.stringify(data) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setNotBefore(now - 5)
    .setExpirationTime(now + GEO_TOKEN_TTL_SECONDS)
    .sign(node.secret);
  return `${GEO_TOKEN_TYPE} ${node.accessKey}:${jwt}`;
}

/** Verifies an `Authorization` header against the known nodes, as `JwtRequestDecoder#decode`. */
export async function verifyGeoToken(
  header: string | undefined,
  nodes: readonly GeoNodeKey[],
  now = signingNowSeconds(),
): Promise<GeoVerdict> {
  const tokens = (header ?? '').split(' ').filter((t) => t !== '');
  if (tokens.length !== 2 || tokens[0] !== GEO_TOKEN_TYPE) return { ok: false, reason: 'malformed' };
  const colon = (tokens[1] as string).indexOf(':');
  if (colon < 0) return { ok: false, reason: 'malformed' };
  const accessKey = (tokens[1] as string).slice(0, colon);
  const node = nodes.find((n) => n.accessKey === accessKey);
  if (!node) return { ok: false, reason: 'no-node' };
  try {
    const { payload } = await jwtVerify((tokens[1] as string).slice(colon + 1), node.secret, {
      algorithms: ['HS256'],
      clockTolerance: GEO_TOKEN_LEEWAY_SECONDS,
      currentDate: new Date(now * 1000),
    });
    if (typeof payload.iat === 'number' && payload.iat > now + GEO_TOKEN_LEEWAY_SECONDS)
      return { ok: false, reason: 'invalid' };
    const data: unknown = typeof payload.data === 'string' ? JSON.parse(payload.data) : undefined;
    if (data === null || typeof data !== 'object' || Array.isArray(data))
      return { ok: false, reason: 'invalid' };
    return { ok: true, node, data: data as GeoRequestData };
  } catch (err) {
    return { ok: false, reason: isSignatureTimeError(err) ? 'signature-time' : 'invalid' };
  }
}
