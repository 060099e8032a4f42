/**
 * @file gitlab-shell's release profiles of the Cells tunnel (reference-cell.md §1.5): the request
 * shapes gitlab-shell sent to a cell's `ssh-upload-pack` / `ssh-receive-pack` release by release.
 * Our router emits any of them (`tunnelProfile`, `ROUTER_TUNNEL_PROFILE`); the cells accept all of
 * them; the conformance kit knows which checks each is expected to pass behind each edge
 * (`conformance/profiles.ts`). One table, documented in README "Conformance".
 */

/** A gitlab-shell release whose tunnel request shapes a router emits. */
export type TunnelProfileName =
  | 'gitlab-shell-14.56'
  | 'gitlab-shell-14.57.2'
  | 'gitlab-shell-14.57.3'
  | 'gitlab-shell-14.57.4'
  | 'gitlab-shell-14.57.6';

/** Every profile, oldest first. */
export const TUNNEL_PROFILE_NAMES: readonly TunnelProfileName[] = [
  'gitlab-shell-14.56',
  'gitlab-shell-14.57.2',
  'gitlab-shell-14.57.3',
  'gitlab-shell-14.57.4',
  'gitlab-shell-14.57.6',
];

/** The newest shape, and what our router did before profiles existed. */
export const DEFAULT_TUNNEL_PROFILE: TunnelProfileName = 'gitlab-shell-14.57.6';

export interface TunnelProfile {
  name: TunnelProfileName;
  /**
   * The upload-pack request body: `kept-open` until the response ends (the client's stdin, as it
   * is), or `closed-after-negotiation`: ended after the client's `done` with a flush-pkt added.
   */
  uploadPackBody: 'kept-open' | 'closed-after-negotiation';
  /**
   * `one-request`: one streaming receive-pack request per push. `two-requests`: (1) a `0000` body,
   * its ref advertisement relayed; (2) opened on the client's first byte, repeated advertisement skipped.
   */
  push: 'one-request' | 'two-requests';
  /** `per-command`: one Shell JWT for every request of a git command; `per-request`: a fresh one each. */
  jwt: 'per-command' | 'per-request';
  /** Where the shape comes from. */
  source: string;
}

export const TUNNEL_PROFILES: Readonly<Record<TunnelProfileName, Readonly<TunnelProfile>>> = {
  'gitlab-shell-14.56': {
    name: 'gitlab-shell-14.56',
    uploadPackBody: 'kept-open',
    push: 'one-request',
    jwt: 'per-command',
    source: 'gitlab-shell v14.56.1 internal/command/shared/cells',
  },
  'gitlab-shell-14.57.2': {
    name: 'gitlab-shell-14.57.2',
    uploadPackBody: 'kept-open',
    push: 'one-request',
    jwt: 'per-command',
    source: 'gitlab-shell!1537 (the body close on the Geo path only)',
  },
  'gitlab-shell-14.57.3': {
    name: 'gitlab-shell-14.57.3',
    uploadPackBody: 'closed-after-negotiation',
    push: 'one-request',
    jwt: 'per-command',
    source: 'gitlab-shell!1546',
  },
  'gitlab-shell-14.57.4': {
    name: 'gitlab-shell-14.57.4',
    uploadPackBody: 'closed-after-negotiation',
    push: 'two-requests',
    jwt: 'per-command',
    source: 'gitlab-shell!1561',
  },
  'gitlab-shell-14.57.6': {
    name: 'gitlab-shell-14.57.6',
    uploadPackBody: 'closed-after-negotiation',
    push: 'two-requests',
    jwt: 'per-request',
    source: 'gitlab-shell!1570 (60 s TTL)',
  },
};

export function isTunnelProfileName(v: unknown): v is TunnelProfileName {
  return typeof v === 'string' && (TUNNEL_PROFILE_NAMES as readonly string[]).includes(v);
}
