import type { CustomActionJson } from '../../lib/contracts/internal-api.js';
import { type AccessDecision, findProject, type ProjectRef } from '../access.js';
import { type Actor, glId } from '../identity.js';
import type { TopologyModel } from '../topology.js';
import type { Replicas } from './replica.js';
import type { GeoRole } from './site.js';
import { signGeoToken } from './token.js';

/**
 * A secondary's `/allowed` answer for a command it does not serve itself (EE `GeoGitAccess`):
 * `300` with the `geo_proxy_to_primary` custom action for every push, and for a fetch while the
 * replica is behind (or always, with `fetchFromPrimary: "always"`). Project visibility is still
 * the secondary's to check (an unknown or unreadable project is its 404); push rules are the
 * primary's, which sees the request with the actor in the token's `gl_id`.
 */
export const GEO_PROXY_ACTION = 'geo_proxy_to_primary';
const PULL_ENDPOINTS = [
  '/api/v4/geo/proxy_git_ssh/info_refs_upload_pack',
  '/api/v4/geo/proxy_git_ssh/upload_pack',
];
const PUSH_ENDPOINTS = [
  '/api/v4/geo/proxy_git_ssh/info_refs_receive_pack',
  '/api/v4/geo/proxy_git_ssh/receive_pack',
];

/** GitLab's `ssh_url_to_repo`: `git@host:path.git`, or `ssh://git@host:port/path.git` off port 22. */
export function sshUrlToRepo(ssh: string, fullPath: string): string {
  const colon = ssh.lastIndexOf(':');
  const host = colon < 0 ? ssh : ssh.slice(0, colon);
  const port = colon < 0 ? '22' : ssh.slice(colon + 1);
  return port === '22' ? `git@${host}:${fullPath}.git` : `ssh://git@${host}:${port}/${fullPath}.git`;
}

/** `Gitlab::Geo.interacting_with_primary_message`, split into lines as GeoGitAccess does. */
export function forwardedMessages(primarySshUrl: string): string[] {
  return [
    'This request to a Geo secondary node will be forwarded to the',
    'Geo primary node:',
    '',
    `  ${primarySshUrl}`,
  ];
}

export interface CustomActionRequest {
  action: string;
  decision: AccessDecision;
  actor: Actor;
  project: ProjectRef;
}

export interface GeoSecondary {
  model: TopologyModel;
  role: GeoRole;
  replicas: Replicas;
}

async function proxies(geo: GeoSecondary, req: CustomActionRequest): Promise<boolean> {
  if (req.action === 'git-receive-pack') return req.decision.outcome !== 'not-found';
  if (req.action !== 'git-upload-pack' || req.decision.outcome !== 'allowed') return false;
  if (geo.role.self.fetchFromPrimary === 'always') return true;
  return geo.replicas.behind(req.decision.project);
}

/** The `300` body, or undefined when the secondary answers the command itself. */
export async function geoCustomAction(
  geo: GeoSecondary,
  req: CustomActionRequest,
): Promise<CustomActionJson | undefined> {
  if (req.decision.outcome === 'misdirected' || !(await proxies(geo, req))) return undefined;
  const project = findProject(geo.model, req.project);
  if (!project) return undefined;
  const fullPath = geo.model.fullPath(project);
  const actorGlId = req.actor.key ? `key-${req.actor.key.id}` : glId(req.actor.user);
  const authorization = await signGeoToken(geo.role.selfKey, { scope: fullPath, gl_id: actorGlId });
  return {
    status: true,
    payload: {
      action: GEO_PROXY_ACTION,
      data: {
        api_endpoints: req.action === 'git-receive-pack' ? PUSH_ENDPOINTS : PULL_ENDPOINTS,
        gl_username: req.actor.user.username,
        primary_repo: `${geo.role.primary.url.replace(/\/+$/, '')}/${fullPath}.git`,
        gl_id: glId(req.actor.user),
        request_headers: { Authorization: authorization },
        geo_proxy_fetch_ssh_direct_to_primary: true,
        geo_proxy_push_ssh_direct_to_primary: true,
      },
    },
    gl_console_messages: forwardedMessages(sshUrlToRepo(geo.role.primary.ssh, fullPath)),
  };
}
