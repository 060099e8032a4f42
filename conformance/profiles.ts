/**
 * @file Which checks each gitlab-shell release profile (`lib/contracts/tunnel-profile.ts`) is
 * expected to FAIL behind each edge: the kit's checks judge against the newest contract, so an
 * older profile fails the checks of what it does not do yet, and behind an edge with idle timeouts
 * the long cases of what broke GitLab's rollouts (README "The rollouts, reproduced"). A FAIL listed
 * here is reported as "expected FAIL" and does not make exit 1. Keyed by edge name; an edge not
 * listed (an edge file) uses `none`'s row.
 */
import type { TunnelProfileName } from '../lib/contracts/tunnel-profile.js';

/** The upload-pack body kept open (≤ 14.57.2): no flush after `done`; an idle body past the edge's timeout. */
const BODY_OPEN = ['S12-shape'];
const BODY_OPEN_EDGE = ['S12-shape', 'S12'];
/**
 * One receive-pack request per push (≤ 14.57.3): idle while a pre-push hook runs (S13-lfs's hook, a
 * token's TTL and Rails' 60 s leeway, outlasts the idle connection of every edge at the doc's figures).
 */
const ONE_PUSH = ['S13-shape'];
const ONE_PUSH_EDGE = ['S13-shape', 'S13-long', 'S13-lfs'];

/** nginx's `client_body_timeout` and `proxy_read_timeout` (kinds `nginx`, `cloudflare`). */
function behindNginx(bodyOpen: boolean, onePush: boolean): readonly string[] {
  return [...(bodyOpen ? BODY_OPEN_EDGE : []), ...(onePush ? ONE_PUSH_EDGE : [])];
}

/** HAProxy: `timeout server` closes the idle push; it has no body-only timeout (S12 not expected). */
function behindHaproxy(bodyOpen: boolean, onePush: boolean): readonly string[] {
  return [...(bodyOpen ? BODY_OPEN : []), ...(onePush ? ONE_PUSH_EDGE : [])];
}

function row(bodyOpen: boolean, onePush: boolean, more: readonly string[] = []) {
  return {
    none: [...(bodyOpen ? BODY_OPEN : []), ...(onePush ? ONE_PUSH : []), ...more],
    nginx: [...behindNginx(bodyOpen, onePush), ...more],
    cloudflare: [...behindNginx(bodyOpen, onePush), ...more],
    haproxy: [...behindHaproxy(bodyOpen, onePush), ...more],
  };
}

export const EXPECTED_FAILS: Readonly<
  Record<TunnelProfileName, Readonly<Record<string, readonly string[]>>>
> = {
  // Body kept open, one receive-pack request per push (its JWT is signed for it, so S13-jwt passes).
  'gitlab-shell-14.56': row(true, true),
  'gitlab-shell-14.57.2': row(true, true),
  // Body closed after negotiation; still one request per push.
  'gitlab-shell-14.57.3': row(false, true),
  // Two requests, but request 2 reuses the JWT signed for request 1 (dead after an LFS upload: S13-lfs).
  'gitlab-shell-14.57.4': row(false, false, ['S13-jwt', 'S13-lfs']),
  'gitlab-shell-14.57.6': row(false, false),
};

/** The checks `profile` is expected to fail behind `edge`. */
export function expectedFails(profile: TunnelProfileName, edge = 'none'): readonly string[] {
  const row = EXPECTED_FAILS[profile];
  return row[edge] ?? row.none ?? [];
}
