import type { GitService } from '../lib/gitaly/index.js';

/** The tunnel endpoints, as Workhorse's route table names them (route ids become log fields and labels). */
export type TunnelRouteId = 'ssh_upload_pack' | 'ssh_receive_pack' | 'ssh_upload_archive';

export interface TunnelRoute {
  id: TunnelRouteId;
  /** Matched against the request path (query removed), like Workhorse's `^/.+\.git/ssh-upload-pack\z`. */
  pattern: RegExp;
  /** The git command; which Gitaly RPC carries it is the connection's choice (sidechannel or stream). */
  service: GitService;
  suffix: string;
}

export const TUNNEL_ROUTES: readonly TunnelRoute[] = [
  {
    id: 'ssh_upload_pack',
    pattern: /^\/.+\.git\/ssh-upload-pack$/,
    service: 'upload-pack',
    suffix: 'ssh-upload-pack',
  },
  {
    id: 'ssh_receive_pack',
    pattern: /^\/.+\.git\/ssh-receive-pack$/,
    service: 'receive-pack',
    suffix: 'ssh-receive-pack',
  },
  {
    id: 'ssh_upload_archive',
    pattern: /^\/.+\.git\/ssh-upload-archive$/,
    service: 'upload-archive',
    suffix: 'ssh-upload-archive',
  },
];

export const ROUTE_IDS: readonly TunnelRouteId[] = TUNNEL_ROUTES.map((r) => r.id);

export interface TunnelMatch {
  route: TunnelRoute;
  /** Project path without leading slash and `.git`, e.g. `my-company/my-project`. */
  project: string;
}

/** `POST /<project>.git/ssh-*` → the route; anything else → undefined (proxied to Rails). */
export function matchTunnel(method: string | undefined, url: string | undefined): TunnelMatch | undefined {
  if (method !== 'POST' || !url) return undefined;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  for (const route of TUNNEL_ROUTES) {
    if (route.pattern.test(path)) {
      return { route, project: path.slice(1, path.length - route.suffix.length - '.git/'.length) };
    }
  }
  return undefined;
}
