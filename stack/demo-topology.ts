import type { Topology } from '../mock-cell/topology-types.js';
import { AccessLevel } from '../mock-cell/topology-types.js';
import { DEMO_CELLS, type StackNet, type StackPaths, type StackPorts } from './layout.js';

/** Demo users; `keyId` is the id of each user's SSH key. */
export const DEMO_USERS = [
  {
    id: 1,
    username: 'root',
    name: 'Administrator',
    admin: true,
    defaultOrganization: 'gitlab-com-public',
    keyId: 1,
  },
  { id: 2, username: 'alice', name: 'Alice', defaultOrganization: 'my-organization', keyId: 2 },
  { id: 3, username: 'bob', name: 'Bob', defaultOrganization: 'gitlab-com-public', keyId: 3 },
  { id: 4, username: 'carol', name: 'Carol', defaultOrganization: 'my-organization', keyId: 4 },
  { id: 5, username: 'dave', name: 'Dave', defaultOrganization: 'my-organization', keyId: 5 },
  // A dotted username (cells-routing.md §5: `john.doe` replaces every parameter in dottedExample).
  { id: 6, username: 'john.doe', name: 'John Doe', defaultOrganization: 'my-organization', keyId: 6 },
] as const;

const MAIN_PROTECTED = [{ name: 'main', pushAccessLevel: AccessLevel.maintainer, allowForcePush: false }];

/** Demo projects: id, namespace, path, visibility. Repositories live at hashedRepoPath(id). */
export const DEMO_PROJECTS = [
  { id: 1, namespace: 'gitlab-org', path: 'gitlab-test', visibility: 'public' },
  { id: 2, namespace: 'gitlab-org', path: 'gitlab', visibility: 'public' },
  { id: 3, namespace: 'my-company', path: 'my-project', visibility: 'private' },
  { id: 4, namespace: 'my-company', path: 'my-other-project', visibility: 'private' },
  { id: 5, namespace: 'not-my-company', path: 'not-my-project', visibility: 'private' },
  // Dotted names, for routing tests: a user namespace and a group, away from the legacy cell.
  { id: 6, namespace: 'john.doe', path: 'notes', visibility: 'public' },
  { id: 7, namespace: 'acme.corp', path: 'www.site', visibility: 'public' },
] as const;

/**
 * The demo topology of architecture.md (seed 000): four cells, `cell_us0` legacy; my-company in
 * cell_eu0 (organization my-organization), not-my-company in cell_us1, gitlab-org in the legacy cell.
 * Dotted names for routing tests: user john.doe (my-organization, cell_eu0) owns `john.doe/notes`;
 * group acme.corp (cell_us1) owns `acme.corp/www.site`.
 */
export function demoTopology(
  ports: StackPorts,
  paths: StackPaths,
  publicKeys: Record<string, string>,
  net: StackNet,
): Topology {
  return {
    externalUrl: `http://${net.host('router')}:${ports.routerHttp}`,
    // The demo's `learn` router needs seed 000's signals (the learn endpoint, 421).
    seed000Routing: true,
    cells: DEMO_CELLS.map((c) => ({
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
    organizations: [
      { id: 1, path: 'gitlab-com-public', name: 'GitLab.com Public', cell: 'cell_us0' },
      { id: 2, path: 'not-my-organization', name: 'Not My Organization', cell: 'cell_us1' },
      { id: 3, path: 'my-organization', name: 'My Organization', cell: 'cell_eu0' },
    ],
    namespaces: [
      { id: 1, path: 'gitlab-org', name: 'GitLab.org', kind: 'group', organization: 'gitlab-com-public' },
      {
        id: 2,
        path: 'not-my-company',
        name: 'Not My Company',
        kind: 'group',
        organization: 'not-my-organization',
      },
      { id: 3, path: 'my-company', name: 'My Company', kind: 'group', organization: 'my-organization' },
      { id: 4, path: 'acme.corp', name: 'Acme Corp', kind: 'group', organization: 'not-my-organization' },
      ...DEMO_USERS.map((u, i) => ({
        id: 10 + i,
        path: u.username,
        name: u.name,
        kind: 'user' as const,
        organization: u.defaultOrganization,
      })),
    ],
    projects: DEMO_PROJECTS.map((p) => ({
      id: p.id,
      path: p.path,
      name: p.path,
      namespace: p.namespace,
      visibility: p.visibility,
      defaultBranch: 'main',
      storage: 'default',
      protectedBranches: MAIN_PROTECTED,
    })),
    users: DEMO_USERS.map((u) => ({
      id: u.id,
      username: u.username,
      name: u.name,
      admin: 'admin' in u ? u.admin : false,
      defaultOrganization: u.defaultOrganization,
      password: `${u.username}-password`,
    })),
    members: [
      { user: 'bob', namespace: 'gitlab-org', accessLevel: AccessLevel.maintainer },
      { user: 'dave', namespace: 'my-company', accessLevel: AccessLevel.maintainer },
      { user: 'alice', project: 'my-company/my-project', accessLevel: AccessLevel.developer },
      { user: 'carol', project: 'my-company/my-project', accessLevel: AccessLevel.reporter },
      // A Developer on the legacy cell, whose push to protected `main` the Geo primary refuses.
      { user: 'john.doe', project: 'gitlab-org/gitlab-test', accessLevel: AccessLevel.developer },
    ],
    keys: DEMO_USERS.map((u) => ({
      id: u.keyId,
      user: u.username,
      title: `${u.username}@demo`,
      key: publicKeys[u.username] ?? '',
    })),
    fixedRoutes: [
      { path: '/admin', cell: 'cell_us0' },
      { path: '/users', cell: 'cell_us0' },
      { path: '/-/profile', cell: 'cell_us0', exact: true },
      { path: '/explore', cell: 'cell_us0' },
      { path: '/help', cell: 'cell_us0' },
    ],
  };
}
