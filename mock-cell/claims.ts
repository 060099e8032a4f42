import { createHash } from 'node:crypto';
import type { Claim } from '../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { publicKeyBlob } from './public-key.js';
import type { TopologyModel } from './topology.js';
import type { TopologyKey } from './topology-types.js';

/**
 * What a cell claims in the Topology Service (`../shared/docs/topology-service.md` §1.3, §2.2): its
 * organizations' paths and their top-level namespaces' routes, and, for the users whose default
 * organization it holds, their ids, usernames and SSH key fingerprints (so gitlab-shell's
 * `authorized_keys` classify by fingerprint lands on the user's cell).
 */

/** OpenSSH's `SHA256:` fingerprint without the prefix: unpadded base64 of SHA-256 over the key blob. */
export function sshKeyFingerprint(key: Pick<TopologyKey, 'key'>): string {
  const blob = publicKeyBlob(key.key) ?? '';
  return createHash('sha256').update(Buffer.from(blob, 'base64')).digest('base64').replace(/=+$/, '');
}

/** The claims of the organization `orgPath` (its path and its namespaces' top-level routes). */
export function organizationClaims(model: TopologyModel, orgPath: string): Claim[] {
  const org = model.organization(orgPath);
  if (!org) return [];
  const claims: Claim[] = [{ organization_path: org.path }];
  for (const ns of model.namespacesOf(org)) claims.push({ route: ns.path });
  return claims;
}

/** The claims of the users whose default organization is `orgPath`. */
export function userClaims(model: TopologyModel, orgPath: string): Claim[] {
  const claims: Claim[] = [];
  const lower = orgPath.toLowerCase();
  for (const user of model.users()) {
    if (user.defaultOrganization.toLowerCase() !== lower) continue;
    claims.push({ user_id: String(user.id) }, { username: user.username });
    for (const key of model.keys()) {
      if (key.user.toLowerCase() === user.username.toLowerCase()) {
        claims.push({ ssh_key_fingerprint: sshKeyFingerprint(key) });
      }
    }
  }
  return claims;
}

/** Everything `cellName` holds now. */
export function cellClaims(model: TopologyModel, cellName: string): Claim[] {
  return model
    .organizations()
    .filter((o) => o.cell === cellName)
    .flatMap((o) => [...organizationClaims(model, o.path), ...userClaims(model, o.path)]);
}
