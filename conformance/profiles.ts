/**
 * @file Which checks each gitlab-shell release profile (`lib/contracts/tunnel-profile.ts`) is
 * expected to FAIL behind each edge: the kit's checks judge against the newest contract, so an
 * older profile fails the checks of what it does not do yet. A FAIL listed here is reported as
 * "expected FAIL" and does not make exit 1. Keyed by edge name (`none`; edges not listed here
 * use `none`'s row until their long cases exist).
 */
import type { TunnelProfileName } from '../lib/contracts/tunnel-profile.js';

export const EXPECTED_FAILS: Readonly<
  Record<TunnelProfileName, Readonly<Record<string, readonly string[]>>>
> = {
  // One receive-pack request per push (its JWT is signed for it, so S13-jwt passes).
  'gitlab-shell-14.56': { none: ['S13-shape'] },
  'gitlab-shell-14.57.2': { none: ['S13-shape'] },
  'gitlab-shell-14.57.3': { none: ['S13-shape'] },
  // Two requests, but request 2 reuses the JWT signed for request 1.
  'gitlab-shell-14.57.4': { none: ['S13-jwt'] },
  'gitlab-shell-14.57.6': { none: [] },
};

/** The checks `profile` is expected to fail behind `edge`. */
export function expectedFails(profile: TunnelProfileName, edge = 'none'): readonly string[] {
  const row = EXPECTED_FAILS[profile];
  return row[edge] ?? row.none ?? [];
}
