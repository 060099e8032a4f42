import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TopologyFile } from '../lib/contracts/topology-file.js';
import { normalizeProjectPath } from '../lib/repo-path.js';
import { publicKeyBlob } from '../mock-cell/public-key.js';
import { resolveBarePath, resolveCells, resolveNamespaces } from './topology-file-resolve.js';

/**
 * The meaning checks of a topology file whose structure the schema has accepted: names do not
 * repeat, every name an entry gives exists, one legacy cell, bare repositories are bare. Every
 * problem is `<path in the file>: <what is wrong>`, in file order.
 */

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const CELL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

type Add = (where: string, what: string) => void;

/** Reports every entry whose key (lower-cased, as GitLab compares paths) repeats an earlier one. */
function unique<T>(add: Add, section: string, list: readonly T[], field: string, keyOf: (e: T) => string) {
  const seen = new Map<string, number>();
  list.forEach((e, i) => {
    const key = keyOf(e).toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else add(`${section}[${i}].${field}`, `"${keyOf(e)}" is already used by ${section}[${first}]`);
  });
}

function checkCells(f: TopologyFile, add: Add): void {
  if (f.cells.length === 0) add('cells', 'must list at least one cell');
  f.cells.forEach((c, i) => {
    if (!CELL_NAME.test(c.name)) add(`cells[${i}].name`, `"${c.name}" may hold only letters, digits, _ . -`);
  });
  unique(add, 'cells', f.cells, 'name', (c) => c.name);
  const ids = resolveCells(f);
  unique(add, 'cells', ids, 'id', (c) => String(c.id));
  f.cells.forEach((c, i) => {
    const clash = ids.findIndex((o, j) => j !== i && o.sessionPrefix === c.sessionPrefix);
    if (c.sessionPrefix !== undefined && clash !== -1)
      add(`cells[${i}].sessionPrefix`, `"${c.sessionPrefix}" is also the session prefix of cells[${clash}]`);
  });
  f.cells.forEach((c, i) => {
    unique(add, `cells[${i}].gitaly.concurrency`, c.gitaly?.concurrency ?? [], 'rpc', (l) => l.rpc);
  });
  const legacy = f.cells.flatMap((c, i) => (c.legacy === true ? [i] : []));
  if (legacy.length === 0 && f.cells.length > 0) add('cells', 'no cell is legacy (exactly one must be)');
  for (const i of legacy.slice(1))
    add(`cells[${i}].legacy`, `a second legacy cell (cells[${legacy[0]}] is legacy already)`);
}

function checkOrganizations(f: TopologyFile, cells: Set<string>, add: Add): void {
  unique(add, 'organizations', f.organizations, 'path', (o) => o.path);
  f.organizations.forEach((o, i) => {
    if (!SEGMENT.test(o.path)) add(`organizations[${i}].path`, `"${o.path}" is not a valid path segment`);
    if (!cells.has(o.cell)) add(`organizations[${i}].cell`, `cell "${o.cell}" is not in cells`);
  });
}

function checkNamespaces(f: TopologyFile, orgs: Set<string>, add: Add): void {
  const list = f.namespaces ?? [];
  const users = new Set((f.users ?? []).map((u) => u.username.toLowerCase()));
  unique(add, 'namespaces', list, 'path', (n) => n.path);
  list.forEach((n, i) => {
    const at = `namespaces[${i}]`;
    if (!SEGMENT.test(n.path) || n.path.endsWith('.git'))
      add(`${at}.path`, `"${n.path}" is not a valid path segment`);
    if (!orgs.has(n.organization.toLowerCase()))
      add(`${at}.organization`, `organization "${n.organization}" is not in organizations`);
    if (n.kind === 'user' && !users.has(n.path.toLowerCase()))
      add(`${at}.path`, `user namespace "${n.path}" has no user of that username in users`);
    if (n.kind === 'group' && users.has(n.path.toLowerCase()))
      add(`${at}.path`, `group "${n.path}" has the path of a user's personal namespace`);
  });
}

function checkProjects(f: TopologyFile, dir: string, namespaces: Set<string>, add: Add): void {
  const list = f.projects ?? [];
  unique(add, 'projects', list, 'path', (p) => p.path);
  list.forEach((p, i) => {
    const at = `projects[${i}]`;
    const namespace = p.path.slice(0, p.path.indexOf('/'));
    if (normalizeProjectPath(p.path) !== p.path || !p.path.split('/').every((s) => SEGMENT.test(s)))
      add(`${at}.path`, `"${p.path}" is not a valid project path "namespace/project"`);
    else if (!namespaces.has(namespace.toLowerCase()))
      add(`${at}.path`, `namespace "${namespace}" is not in namespaces (nor a user's)`);
    const repo = p.repository;
    if (repo !== undefined && 'bare' in repo) {
      const path = resolveBarePath(dir, repo.bare);
      if (!isBareRepository(path)) add(`${at}.repository.bare`, `"${path}" is not a bare repository`);
    }
    unique(add, `${at}.protectedBranches`, p.protectedBranches ?? [], 'name', (b) => b.name);
  });
}

/** A folder with HEAD, objects/ and refs/ at its top (what `git init --bare` makes). */
export function isBareRepository(path: string): boolean {
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  return (
    isDir(path) && existsSync(join(path, 'HEAD')) && isDir(join(path, 'objects')) && isDir(join(path, 'refs'))
  );
}

function checkUsers(f: TopologyFile, orgs: Set<string>, add: Add): void {
  const list = f.users ?? [];
  unique(add, 'users', list, 'username', (u) => u.username);
  unique(
    add,
    'users',
    list.filter((u) => u.publicKey !== undefined),
    'publicKey',
    (u) => publicKeyBlob(u.publicKey ?? '') ?? '',
  );
  list.forEach((u, i) => {
    const at = `users[${i}]`;
    if (!SEGMENT.test(u.username)) add(`${at}.username`, `"${u.username}" is not a valid username`);
    if (!orgs.has(u.defaultOrganization.toLowerCase()))
      add(`${at}.defaultOrganization`, `organization "${u.defaultOrganization}" is not in organizations`);
    if (u.publicKey !== undefined && publicKeyBlob(u.publicKey) === undefined)
      add(`${at}.publicKey`, 'is not an OpenSSH public key line "<type> <base64> [comment]"');
  });
}

function checkMembers(f: TopologyFile, add: Add): void {
  const users = new Set((f.users ?? []).map((u) => u.username.toLowerCase()));
  const groups = new Set(
    (f.namespaces ?? []).filter((n) => n.kind === 'group').map((n) => n.path.toLowerCase()),
  );
  const projects = new Set((f.projects ?? []).map((p) => p.path.toLowerCase()));
  const members = f.members ?? [];
  members.forEach((m, i) => {
    const at = `members[${i}]`;
    if (!users.has(m.user.toLowerCase())) add(`${at}.user`, `user "${m.user}" is not in users`);
    if ((m.namespace === undefined) === (m.project === undefined))
      add(at, 'exactly one of "namespace" (a group membership) and "project" must be set');
    else if (m.namespace !== undefined && !groups.has(m.namespace.toLowerCase()))
      add(`${at}.namespace`, `group "${m.namespace}" is not in namespaces`);
    else if (m.project !== undefined && !projects.has(m.project.toLowerCase()))
      add(`${at}.project`, `project "${m.project}" is not in projects`);
  });
  unique(add, 'members', members, 'user', (m) => `${m.user} in ${m.namespace ?? m.project}`);
}

function checkRoutesRoutersGeo(f: TopologyFile, cells: Set<string>, add: Add): void {
  (f.fixedRoutes ?? []).forEach((r, i) => {
    if (!/^\/[^?#\s]*[^/?#\s]$/.test(r.path))
      add(`fixedRoutes[${i}].path`, `"${r.path}" must start with "/" and not end with "/"`);
    if (!cells.has(r.cell)) add(`fixedRoutes[${i}].cell`, `cell "${r.cell}" is not in cells`);
  });
  unique(add, 'fixedRoutes', f.fixedRoutes ?? [], 'path', (r) => r.path);
  const learn = f.routers?.learn ?? f.seed000Routing === true;
  if (learn && f.seed000Routing !== true)
    add('routers.learn', 'the learn router needs "seed000Routing": true (its learn endpoint and 421)');
  if (!learn && f.routers?.topology === false)
    add('routers', 'at least one router must run (stack.json names it as "router")');
  (f.geo ?? []).forEach((g, i) => {
    if (!cells.has(g.cell)) add(`geo[${i}].cell`, `cell "${g.cell}" is not in cells`);
  });
  unique(add, 'geo', f.geo ?? [], 'cell', (g) => g.cell);
}

/** Every problem of a schema-valid topology file read from the folder `dir`; none when it is good. */
export function checkTopologyFile(f: TopologyFile, dir: string): string[] {
  const problems: string[] = [];
  const add: Add = (where, what) => problems.push(`${where}: ${what}`);
  const cells = new Set(f.cells.map((c) => c.name));
  const orgs = new Set(f.organizations.map((o) => o.path.toLowerCase()));
  checkCells(f, add);
  checkOrganizations(f, cells, add);
  checkNamespaces(f, orgs, add);
  const namespaces = new Set(resolveNamespaces(f).map((n) => n.path.toLowerCase()));
  checkProjects(f, dir, namespaces, add);
  checkUsers(f, orgs, add);
  checkMembers(f, add);
  checkRoutesRoutersGeo(f, cells, add);
  return problems;
}
