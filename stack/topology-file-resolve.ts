import { isAbsolute, resolve } from 'node:path';
import type { GitalyConcurrencyLimit, TopologyFile, TopologyRole } from '../lib/contracts/topology-file.js';
import { DEFAULT_TUNNEL_PROFILE, type TunnelProfileName } from '../lib/contracts/tunnel-profile.js';
import { SHELL_TTL_SECONDS } from '../lib/jwt-sign.js';
import {
  AccessLevel,
  type FixedRoute,
  type ProtectedBranch,
  type TopologyMember,
  type TopologyNamespace,
  type TopologyOrganization,
  type Visibility,
} from '../mock-cell/topology-types.js';

/**
 * A checked topology file with everything the file leaves out filled in: ids in file order,
 * default names, branches, protection, passwords, the personal namespace of every user, fixed
 * routes and routers. What the stack plans its services and writes the mock cell's topology from.
 */

export interface WorldCell {
  id: number;
  name: string;
  region: string;
  legacy: boolean;
  sessionPrefix: string;
  /** Its mock Gitaly's `[[concurrency]]` limits (empty: nothing limited). */
  gitalyConcurrency: Required<GitalyConcurrencyLimit>[];
}

export interface WorldProject {
  id: number;
  namespace: string;
  /** The project's path inside its namespace. */
  path: string;
  visibility: Visibility;
  defaultBranch: string;
  protectedBranches: ProtectedBranch[];
  /** A seed (`stack/git-fixture.ts` history, or empty) or an absolute bare repository path to copy. */
  repository: { seed: 'demo' | 'empty' } | { bare: string };
}

export interface WorldUser {
  id: number;
  username: string;
  name: string;
  admin: boolean;
  defaultOrganization: string;
  password: string;
  /** The public key line the file gave; absent: the stack generates a key pair. */
  publicKey?: string;
}

export interface World {
  /** Absolute path of the topology file. */
  file: string;
  cells: WorldCell[];
  organizations: TopologyOrganization[];
  namespaces: TopologyNamespace[];
  projects: WorldProject[];
  users: WorldUser[];
  members: TopologyMember[];
  fixedRoutes: FixedRoute[];
  seed000Routing: boolean;
  routers: {
    learn: boolean;
    topology: boolean;
    tunnelProfile: TunnelProfileName;
    shellJwtTtlSeconds: number;
  };
  /** Cells that get a Geo secondary site. */
  geo: string[];
  /** The file's `edge`: a kind, or the absolute path of an edge file; undefined when it names none. */
  edge: string | undefined;
}

export const ROLE_LEVEL: Record<TopologyRole, number> = AccessLevel;
const PUSH_LEVEL = { developer: 30, maintainer: 40, owner: 50, nobody: 0 } as const;

/** The routes of GitLab's legacy cell, when the file names none. */
export function defaultFixedRoutes(legacy: string): FixedRoute[] {
  return [
    { path: '/admin', cell: legacy },
    { path: '/users', cell: legacy },
    { path: '/-/profile', cell: legacy, exact: true },
    { path: '/explore', cell: legacy },
    { path: '/help', cell: legacy },
  ];
}

/** The cells with their ids: as given, else the position in the file (from 1). */
export function resolveCells(file: TopologyFile): WorldCell[] {
  return file.cells.map((c, i) => {
    const id = c.id ?? i + 1;
    return {
      id,
      name: c.name,
      region: c.region,
      legacy: c.legacy === true,
      sessionPrefix: c.sessionPrefix ?? `cell-${id}`,
      gitalyConcurrency: (c.gitaly?.concurrency ?? []).map((l) => ({ maxQueueWaitMs: 0, ...l })),
    };
  });
}

/**
 * Listed namespaces are numbered from 1 in file order; the personal namespaces created for users
 * follow from the next multiple of 10 (so the demo's four groups are 1–4 and its users 10–15).
 */
export function resolveNamespaces(file: TopologyFile): TopologyNamespace[] {
  const listed = (file.namespaces ?? []).map((n, i) => ({
    id: i + 1,
    path: n.path,
    name: n.name ?? n.path,
    kind: n.kind,
    organization: n.organization,
  }));
  const taken = new Set(listed.map((n) => n.path.toLowerCase()));
  const first = Math.floor(listed.length / 10 + 1) * 10;
  const personal = (file.users ?? [])
    .filter((u) => !taken.has(u.username.toLowerCase()))
    .map((u, i) => ({
      id: first + i,
      path: u.username,
      name: u.name ?? u.username,
      kind: 'user' as const,
      organization: u.defaultOrganization,
    }));
  return [...listed, ...personal];
}

function resolveProjects(file: TopologyFile, dir: string): WorldProject[] {
  return (file.projects ?? []).map((p, i) => {
    const slash = p.path.indexOf('/');
    const defaultBranch = p.defaultBranch ?? 'main';
    const repository = p.repository ?? { seed: 'demo' };
    return {
      id: i + 1,
      namespace: p.path.slice(0, slash),
      path: p.path.slice(slash + 1),
      visibility: p.visibility ?? 'private',
      defaultBranch,
      protectedBranches: (p.protectedBranches ?? [{ name: defaultBranch }]).map((b) => ({
        name: b.name,
        pushAccessLevel: PUSH_LEVEL[b.push ?? 'maintainer'],
        allowForcePush: b.allowForcePush === true,
      })),
      repository: 'bare' in repository ? { bare: resolveBarePath(dir, repository.bare) } : repository,
    };
  });
}

export function resolveBarePath(dir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(dir, path);
}

/** The world of a checked topology file read from `file` (absolute). */
export function resolveTopologyFile(file: TopologyFile, path: string, dir: string): World {
  const cells = resolveCells(file);
  const legacy = cells.find((c) => c.legacy)?.name ?? '';
  const seed000Routing = file.seed000Routing === true;
  return {
    file: path,
    cells,
    organizations: file.organizations.map((o, i) => ({
      id: i + 1,
      path: o.path,
      name: o.name ?? o.path,
      cell: o.cell,
    })),
    namespaces: resolveNamespaces(file),
    projects: resolveProjects(file, dir),
    users: (file.users ?? []).map((u, i) => ({
      id: i + 1,
      username: u.username,
      name: u.name ?? u.username,
      admin: u.admin === true,
      defaultOrganization: u.defaultOrganization,
      password: u.password ?? `${u.username}-password`,
      ...(u.publicKey === undefined ? {} : { publicKey: u.publicKey }),
    })),
    members: (file.members ?? []).map((m) => ({
      user: m.user,
      ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
      ...(m.project === undefined ? {} : { project: m.project }),
      accessLevel: ROLE_LEVEL[m.role],
    })),
    fixedRoutes: file.fixedRoutes ?? defaultFixedRoutes(legacy),
    seed000Routing,
    routers: {
      learn: file.routers?.learn ?? seed000Routing,
      topology: file.routers?.topology ?? true,
      tunnelProfile: file.routers?.tunnelProfile ?? DEFAULT_TUNNEL_PROFILE,
      shellJwtTtlSeconds: file.routers?.shellJwtTtlSeconds ?? SHELL_TTL_SECONDS,
    },
    geo: (file.geo ?? []).map((g) => g.cell),
    edge: file.edge === undefined || !/[./]/.test(file.edge) ? file.edge : resolve(dir, file.edge),
  };
}
