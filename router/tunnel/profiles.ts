/**
 * @file What a gitlab-shell release profile (`lib/contracts/tunnel-profile.ts`) decides for one git
 * command's tunnel: the upload-pack input filter, one or two receive-pack requests, and which Shell
 * JWT each request carries. `git-command.ts` consumes the shape; nothing else differs by profile.
 */
import {
  DEFAULT_TUNNEL_PROFILE,
  TUNNEL_PROFILES,
  type TunnelProfileName,
} from '../../lib/contracts/tunnel-profile.js';
import { type JwtKey, SHELL_TTL_SECONDS, signShellJwt } from '../../lib/jwt.js';
import { type InputFilter, passthrough, UploadPackFilter } from './input.js';

export interface TunnelShape {
  /** The filter of the upload-pack request body (a fresh one per request). */
  uploadPackInput(): InputFilter;
  /** Push as gitlab-shell!1561's two requests, else one streaming receive-pack request. */
  twoRequestPush: boolean;
  /** The Shell JWT of the command's next tunnel request. */
  shellJwt(): Promise<string>;
}

/**
 * The shape of one git command's tunnel. `per-command` JWTs are signed at the command's first
 * tunnel request and reused (so a second push request can carry an expired one, as before
 * gitlab-shell!1570); `per-request` signs a fresh token for each. Each is valid `ttlSeconds` (router
 * setting `shellJwtTtlSeconds`, gitlab-shell's 60 s by default).
 */
export function tunnelShape(
  profileName: TunnelProfileName | undefined,
  key: JwtKey,
  glId: string | undefined,
  ttlSeconds = SHELL_TTL_SECONDS,
): TunnelShape {
  const profile = TUNNEL_PROFILES[profileName ?? DEFAULT_TUNNEL_PROFILE];
  let once: Promise<string> | undefined;
  return {
    uploadPackInput: () =>
      profile.uploadPackBody === 'closed-after-negotiation' ? new UploadPackFilter() : passthrough,
    twoRequestPush: profile.push === 'two-requests',
    shellJwt: () => {
      if (profile.jwt === 'per-request') return signShellJwt(key, glId, undefined, ttlSeconds);
      once ??= signShellJwt(key, glId, undefined, ttlSeconds);
      return once;
    },
  };
}
