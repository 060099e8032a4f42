import { isAbsolute } from 'node:path';
import { normalizeProjectPath } from '../lib/repo-path.js';
import { publicKeyBlob } from './public-key.js';
import { label, type Problems } from './topology-problems.js';
import {
  AccessLevel,
  type FixedRoute,
  type Topology,
  type TopologyCell,
  type TopologyKey,
  type TopologyMember,
  type TopologyNamespace,
  type TopologyOrganization,
  type TopologyProject,
  type TopologyUser,
} from './topology-types.js';

/**
 * The reference pass of topology validation, run on a well-shaped topology: URLs, paths and levels
 * are valid, and every name an entry gives (cell, organization, namespace, user, project, storage)
 * exists. Sections are checked in file order, so the problems are listed in that order.
 */

const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const ACCESS_LEVELS: readonly number[] = Object.values(AccessLevel);
/** Protected-branch push levels: 0 = no one, else a member access level. */
const PUSH_ACCESS_LEVELS: readonly number[] = [0, ...ACCESS_LEVELS];

/** The entries others refer to, by the key they are referred to with (paths and usernames lower-cased). */
interface Lookups {
  cells: Map<string, TopologyCell>;
  orgs: Map<string, TopologyOrganization>;
  namespaces: Map<string, TopologyNamespace>;
  users: Set<string>;
  projects: Set<string>;
  /** The cell names, for messages. */
  cellNames: string;
}

function lookupsOf(t: Topology): Lookups {
  const cells = new Map(t.cells.map((c) => [c.name, c]));
  return {
    cells,
    orgs: new Map(t.organizations.map((o) => [o.path.toLowerCase(), o])),
    namespaces: new Map(t.namespaces.map((n) => [n.path.toLowerCase(), n])),
    users: new Set(t.users.map((u) => u.username.toLowerCase())),
    projects: new Set(t.projects.map((x) => `${x.namespace}/${x.path}`.toLowerCase())),
    cellNames: [...cells.keys()].join(', '),
  };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function checkReferences(t: Topology, p: Problems): void {
  checkTopLevel(t, p);
  const l = lookupsOf(t);
  t.cells.forEach((c, i) => {
    checkCell(label('cells', i, c), c, p);
  });
  t.organizations.forEach((o, i) => {
    checkOrganization(label('organizations', i, o), o, l, p);
  });
  t.namespaces.forEach((n, i) => {
    checkNamespace(label('namespaces', i, n), n, l, p);
  });
  t.projects.forEach((x, i) => {
    checkProject(label('projects', i, x), x, l, p);
  });
  t.users.forEach((u, i) => {
    checkUser(label('users', i, u), u, l, p);
  });
  t.members.forEach((m, i) => {
    checkMember(label('members', i, m), m, l, p);
  });
  t.keys.forEach((k, i) => {
    checkKey(label('keys', i, k), k, l, p);
  });
  t.fixedRoutes.forEach((r, i) => {
    checkFixedRoute(label('fixedRoutes', i, r), r, l, p);
  });
}

function checkTopLevel(t: Topology, p: Problems): void {
  if (!isHttpUrl(t.externalUrl))
    p.add('externalUrl', `must be an http(s) URL, got ${JSON.stringify(t.externalUrl)}`);
  const legacy = t.cells.filter((c) => c.legacy === true);
  if (legacy.length !== 1) {
    p.add('cells', `exactly one cell must have "legacy": true, found ${legacy.length}`);
  }
}

function checkCell(where: string, c: TopologyCell, p: Problems): void {
  if (!isHttpUrl(c.url)) p.add(where, `field "url" must be an http(s) URL, got ${JSON.stringify(c.url)}`);
  for (const [name, dir] of Object.entries(c.gitaly.storages)) {
    if (!isAbsolute(dir))
      p.add(where, `storage "${name}" must be an absolute folder path, got ${JSON.stringify(dir)}`);
  }
  if (!/^(tcp|tls|unix):/.test(c.gitaly.address)) {
    p.add(
      where,
      `field "gitaly.address" must start with tcp://, tls:// or unix:, got ${JSON.stringify(c.gitaly.address)}`,
    );
  }
}

function checkOrganization(where: string, o: TopologyOrganization, l: Lookups, p: Problems): void {
  if (!PATH_SEGMENT.test(o.path))
    p.add(where, `field "path" is not a valid path segment: ${JSON.stringify(o.path)}`);
  if (!l.cells.has(o.cell)) p.add(where, `field "cell": no cell named "${o.cell}" (cells: ${l.cellNames})`);
}

function checkNamespace(where: string, n: TopologyNamespace, l: Lookups, p: Problems): void {
  if (!PATH_SEGMENT.test(n.path) || n.path.endsWith('.git')) {
    p.add(where, `field "path" is not a valid path segment: ${JSON.stringify(n.path)}`);
  }
  if (n.kind !== 'group' && n.kind !== 'user')
    p.add(where, `field "kind" must be "group" or "user", got "${n.kind}"`);
  if (!l.orgs.has(n.organization.toLowerCase())) {
    p.add(where, `field "organization": no organization with path "${n.organization}"`);
  }
}

function checkProject(where: string, x: TopologyProject, l: Lookups, p: Problems): void {
  if (
    normalizeProjectPath(`${x.namespace}/${x.path}`) !== `${x.namespace}/${x.path}` ||
    x.path.includes('/')
  ) {
    p.add(where, `field "path" is not a valid project path: ${JSON.stringify(x.path)}`);
  }
  if (!['private', 'internal', 'public'].includes(x.visibility)) {
    p.add(where, `field "visibility" must be private, internal or public, got "${x.visibility}"`);
  }
  checkProjectStorage(where, x, l, p);
  x.protectedBranches.forEach((pb, j) => {
    if (!PUSH_ACCESS_LEVELS.includes(pb.pushAccessLevel)) {
      p.add(
        `${where} protectedBranches[${j}]`,
        `field "pushAccessLevel" must be one of ${PUSH_ACCESS_LEVELS.join(', ')}, got ${pb.pushAccessLevel}`,
      );
    }
  });
}

/** The project's namespace exists, and the cell that owns it (through its organization) has its storage. */
function checkProjectStorage(where: string, x: TopologyProject, l: Lookups, p: Problems): void {
  const ns = l.namespaces.get(x.namespace.toLowerCase());
  if (!ns) {
    p.add(where, `field "namespace": no namespace with path "${x.namespace}"`);
    return;
  }
  const cell = l.cells.get(l.orgs.get(ns.organization.toLowerCase())?.cell ?? '');
  if (cell && !(x.storage in cell.gitaly.storages)) {
    p.add(where, `field "storage": cell "${cell.name}" that owns the project has no storage "${x.storage}"`);
  }
}

function checkUser(where: string, u: TopologyUser, l: Lookups, p: Problems): void {
  if (!l.orgs.has(u.defaultOrganization.toLowerCase())) {
    p.add(where, `field "defaultOrganization": no organization with path "${u.defaultOrganization}"`);
  }
}

function checkMember(where: string, m: TopologyMember, l: Lookups, p: Problems): void {
  if (!l.users.has(m.user.toLowerCase())) p.add(where, `field "user": no user "${m.user}"`);
  if ((m.namespace === undefined) === (m.project === undefined)) {
    p.add(where, 'exactly one of the fields "namespace" (group membership) and "project" must be set');
  } else if (m.namespace !== undefined && !l.namespaces.has(m.namespace.toLowerCase())) {
    p.add(where, `field "namespace": no namespace "${m.namespace}"`);
  } else if (m.project !== undefined && !l.projects.has(m.project.toLowerCase())) {
    p.add(where, `field "project": no project "${m.project}"`);
  }
  if (!ACCESS_LEVELS.includes(m.accessLevel)) {
    p.add(where, `field "accessLevel" must be one of ${ACCESS_LEVELS.join(', ')}, got ${m.accessLevel}`);
  }
}

function checkKey(where: string, k: TopologyKey, l: Lookups, p: Problems): void {
  if (!l.users.has(k.user.toLowerCase())) p.add(where, `field "user": no user "${k.user}"`);
  if (publicKeyBlob(k.key) === undefined) {
    p.add(where, 'field "key" must be an OpenSSH public key line "<type> <base64> [comment]"');
  }
}

function checkFixedRoute(where: string, r: FixedRoute, l: Lookups, p: Problems): void {
  if (!/^\/[^?#\s]*[^/?#\s]$/.test(r.path)) {
    p.add(where, `field "path" must start with "/" and not end with "/", got ${JSON.stringify(r.path)}`);
  }
  if (!l.cells.has(r.cell)) p.add(where, `field "cell": no cell named "${r.cell}" (cells: ${l.cellNames})`);
}
