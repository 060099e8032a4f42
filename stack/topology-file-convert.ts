import type { Topology } from '../mock-cell/topology-types.js';
import type { StackNet, StackPaths, StackPorts } from './layout.js';
import type { World } from './topology-file-resolve.js';

/**
 * The mock cell's topology (`mock-cell/topology-types.ts`) of a world: the file's entries with the
 * addresses, storages and keys the stack decided. Each user's key has the user's id.
 */
export function worldTopology(
  world: World,
  ports: StackPorts,
  paths: StackPaths,
  publicKeys: Record<string, string>,
  net: StackNet,
): Topology {
  return {
    externalUrl: `http://${net.host('router')}:${ports.routerHttp}`,
    ...(world.seed000Routing ? { seed000Routing: true } : {}),
    cells: world.cells.map((c) => ({
      id: c.id,
      name: c.name,
      legacy: c.legacy,
      region: c.region,
      url: `http://${net.host('bridge', c)}:${ports.bridge(c.id)}`,
      gitaly: {
        address: `tcp://${net.host('gitaly', c)}:${ports.gitaly(c.id)}`,
        storages: { default: paths.storage(c.name) },
      },
    })),
    organizations: world.organizations.map((o) => ({ ...o })),
    namespaces: world.namespaces.map((n) => ({ ...n })),
    projects: world.projects.map((p) => ({
      id: p.id,
      path: p.path,
      name: p.path,
      namespace: p.namespace,
      visibility: p.visibility,
      defaultBranch: p.defaultBranch,
      storage: 'default',
      protectedBranches: p.protectedBranches.map((b) => ({ ...b })),
    })),
    users: world.users.map((u) => ({
      id: u.id,
      username: u.username,
      name: u.name,
      admin: u.admin,
      defaultOrganization: u.defaultOrganization,
      password: u.password,
    })),
    members: world.members.map((m) => ({ ...m })),
    keys: world.users.map((u) => ({
      id: u.id,
      user: u.username,
      title: `${u.username}@demo`,
      key: publicKeys[u.username] ?? '',
    })),
    fixedRoutes: world.fixedRoutes.map((r) => ({ ...r })),
  };
}
