import { errors as joseErrors, jwtVerify } from 'jose';
import { type JwtKey, SHELL_ISSUER, WORKHORSE_ISSUER } from './jwt-sign.js';

/**
 * The two HS256 JWTs of GitLab's internal traffic:
 * - shell JWT, header `Gitlab-Shell-Api-Request`: `{iss:"gitlab-shell", iat, exp=iat+60, gl_id?}`;
 * - workhorse JWT, header `Gitlab-Workhorse-Api-Request`: `{iss:"gitlab-workhorse", iat}`.
 * Signing lives in `jwt-sign.ts` (no jose), re-exported here. The algorithm is pinned to HS256 when
 * verifying, so `alg: none` or RS256 tokens never pass.
 */
export {
  type JwtKey,
  jwtKey,
  SHELL_HEADER,
  SHELL_ISSUER,
  SHELL_TTL_SECONDS,
  signShellJwt,
  signWorkhorseJwt,
  WORKHORSE_HEADER,
  WORKHORSE_ISSUER,
} from './jwt-sign.js';
/** Rails decodes the shell JWT with 60 s of leeway. */
export const SHELL_LEEWAY_SECONDS = 60;
/** Rails' API_REQUEST_JWT_VALIDITY default for the workhorse JWT. */
export const WORKHORSE_VALIDITY_SECONDS = 90;

const ALGORITHMS = ['HS256'];

export type JwtFailure =
  | 'missing'
  | 'malformed'
  | 'bad-signature'
  | 'expired'
  | 'wrong-issuer'
  | 'missing-claim'
  | 'stale';

export type VerifyResult<T> = { ok: true; claims: T } | { ok: false; reason: JwtFailure };

function classify(err: unknown): JwtFailure {
  if (err instanceof joseErrors.JWTExpired) return 'expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return err.claim === 'iss' ? 'wrong-issuer' : 'missing-claim';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad-signature';
  return 'malformed';
}

/**
 * Verifies a shell JWT as Rails does (HS256, iss gitlab-shell, 60 s leeway); `now` is the verifier's
 * clock (default the real one; the bridge passes its own, `lib/clock.ts`).
 */
export async function verifyShellJwt(
  key: JwtKey,
  token: string | undefined,
  opts: { requireGlId?: boolean; leewaySeconds?: number; now?: Date } = {},
): Promise<VerifyResult<{ gl_id?: string }>> {
  if (!token) return { ok: false, reason: 'missing' };
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ALGORITHMS,
      issuer: SHELL_ISSUER,
      clockTolerance: opts.leewaySeconds ?? SHELL_LEEWAY_SECONDS,
      ...(opts.now ? { currentDate: opts.now } : {}),
    });
    const glId = payload.gl_id;
    if (glId !== undefined && typeof glId !== 'string') return { ok: false, reason: 'missing-claim' };
    if (opts.requireGlId && !glId) return { ok: false, reason: 'missing-claim' };
    return { ok: true, claims: glId ? { gl_id: glId } : {} };
  } catch (err) {
    return { ok: false, reason: classify(err) };
  }
}

/** Verifies a workhorse JWT as Rails does (HS256, iss gitlab-workhorse, iat no older than 90 s). */
export async function verifyWorkhorseJwt(
  key: JwtKey,
  token: string | undefined,
  now = Math.floor(Date.now() / 1000),
): Promise<VerifyResult<Record<string, never>>> {
  if (!token) return { ok: false, reason: 'missing' };
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ALGORITHMS, issuer: WORKHORSE_ISSUER });
    if (typeof payload.iat !== 'number') return { ok: false, reason: 'missing-claim' };
    if (payload.iat < now - WORKHORSE_VALIDITY_SECONDS) return { ok: false, reason: 'stale' };
    return { ok: true, claims: {} };
  } catch (err) {
    return { ok: false, reason: classify(err) };
  }
}
