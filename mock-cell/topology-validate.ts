import { isAbsolute } from 'node:path';
import { normalizeProjectPath } from '../lib/repo-path.js';
import { TopologyInvalid } from './errors.js';
import { AccessLevel, type Topology } from './topology-types.js';

/**
 * Validates a parsed topology file: first the shape of every entry (types of fields), then the
 * references between entries and their uniqueness. Every problem names the entry and the field;
 * all problems are reported at once in one CELL_TOPOLOGY_INVALID error.
 */

type Kind = 'string' | 'int' | 'bool' | 'object' | 'array';
type FieldSpec = Record<string, Kind | `${Kind}?`>;
type Entry = Record<string, unknown>;

const SECTIONS = {
  cells: { id: 'int', name: 'string', legacy: 'bool?', region: 'string', url: 'string', gitaly: 'object' },
  organizations: { id: 'int', path: 'string', name: 'string', cell: 'string' },
  namespaces: { id: 'int', path: 'string', name: 'string', kind: 'string', organization: 'string' },
  projects: {
    id: 'int',
    path: 'string',
    name: 'string',
    namespace: 'string',
    visibility: 'string',
    defaultBranch: 'string',
    storage: 'string',
    protectedBranches: 'array',
  },
  users: {
    id: 'int',
    username: 'string',
    name: 'string',
    admin: 'bool?',
    defaultOrganization: 'string',
    password: 'string',
  },
  members: { user: 'string', namespace: 'string?', project: 'string?', accessLevel: 'int' },
  keys: { id: 'int', user: 'string', title: 'string', key: 'string' },
  fixedRoutes: { path: 'string', cell: 'string', exact: 'bool?' },
} satisfies Record<keyof Omit<Topology, 'externalUrl'>, FieldSpec>;

const GITALY_SPEC: FieldSpec = { address: 'string', storages: 'object' };
const PROTECTED_BRANCH_SPEC: FieldSpec = { name: 'string', pushAccessLevel: 'int', allowForcePush: 'bool' };

const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const ACCESS_LEVELS: readonly number[] = Object.values(AccessLevel);
/** Protected-branch push levels: 0 = no one, else a member access level. */
const PUSH_ACCESS_LEVELS: readonly number[] = [0, ...ACCESS_LEVELS];

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && Number.isInteger(v)) return 'integer';
  return typeof v;
}

function hasKind(v: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof v === 'string' && v !== '';
    case 'int':
      return typeof v === 'number' && Number.isInteger(v);
    case 'bool':
      return typeof v === 'boolean';
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
  }
}

const KIND_TEXT: Record<Kind, string> = {
  string: 'a non-empty string',
  int: 'an integer',
  bool: 'true or false',
  object: 'an object',
  array: 'an array',
};

function label(section: string, index: number, entry: object): string {
  const e = entry as Entry;
  const fullPath =
    typeof e.namespace === 'string' && typeof e.path === 'string' ? `${e.namespace}/${e.path}` : undefined;
  const ident = e.username ?? fullPath ?? e.path ?? e.name ?? e.user;
  return typeof ident === 'string' ? `${section}[${index}] "${ident}"` : `${section}[${index}]`;
}

class Problems {
  readonly list: string[] = [];

  add(where: string, message: string): void {
    this.list.push(`${where}: ${message}`);
  }

  /** Checks the fields of one object against a spec; returns true when all are well typed. */
  fields(where: string, entry: Entry, spec: FieldSpec): boolean {
    let ok = true;
    for (const [key, raw] of Object.entries(spec)) {
      const optional = raw.endsWith('?');
      const kind = raw.replace('?', '') as Kind;
      const value = entry[key];
      if (value === undefined && optional) continue;
      if (!hasKind(value, kind)) {
        this.add(where, `field "${key}" must be ${KIND_TEXT[kind]}, got ${kindOf(value)}`);
        ok = false;
      }
    }
    return ok;
  }

  throwIfAny(): void {
    if (this.list.length > 0) {
      throw TopologyInvalid(
        `invalid topology (${this.list.length} problem${this.list.length === 1 ? '' : 's'}):\n  - ${this.list.join('\n  - ')}`,
      );
    }
  }
}

function checkShape(value: unknown, p: Problems): void {
  if (!hasKind(value, 'object')) {
    p.add('topology', `must be a JSON object, got ${kindOf(value)}`);
    return;
  }
  const top = value as Entry;
  if (!hasKind(top.externalUrl, 'string'))
    p.add('externalUrl', `must be a non-empty string, got ${kindOf(top.externalUrl)}`);
  for (const [section, spec] of Object.entries(SECTIONS)) {
    const list = top[section];
    if (!Array.isArray(list)) {
      p.add(section, `must be an array, got ${kindOf(list)}`);
      continue;
    }
    list.forEach((entry: unknown, i) => {
      if (!hasKind(entry, 'object')) {
        p.add(`${section}[${i}]`, `must be an object, got ${kindOf(entry)}`);
        return;
      }
      const e = entry as Entry;
      const where = label(section, i, e);
      if (!p.fields(where, e, spec)) return;
      if (section === 'cells') checkGitalyShape(where, e.gitaly as Entry, p);
      if (section === 'projects') {
        (e.protectedBranches as unknown[]).forEach((pb, j) => {
          const at = `${where} protectedBranches[${j}]`;
          if (!hasKind(pb, 'object')) p.add(at, `must be an object, got ${kindOf(pb)}`);
          else p.fields(at, pb as Entry, PROTECTED_BRANCH_SPEC);
        });
      }
    });
  }
}

function checkGitalyShape(where: string, gitaly: Entry, p: Problems): void {
  if (!p.fields(`${where} gitaly`, gitaly, GITALY_SPEC)) return;
  const storages = Object.entries(gitaly.storages as Entry);
  if (storages.length === 0) p.add(`${where} gitaly.storages`, 'must name at least one storage');
  for (const [name, dir] of storages) {
    if (!hasKind(dir, 'string'))
      p.add(`${where} gitaly.storages.${name}`, `must be a folder path, got ${kindOf(dir)}`);
  }
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Reports entries whose key (lower-cased, as GitLab compares paths) repeats an earlier one. */
function unique<T extends object>(
  p: Problems,
  section: string,
  list: readonly T[],
  field: string,
  keyOf: (e: T) => string,
): void {
  const seen = new Map<string, number>();
  list.forEach((e, i) => {
    const key = keyOf(e).toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else
      p.add(
        label(section, i, e),
        `${field} ${JSON.stringify(keyOf(e))} is already used by ${section}[${first}]`,
      );
  });
}

/** Decodes the base64 blob of an OpenSSH public key line; undefined when the line is malformed. */
export function publicKeyBlob(line: string): string | undefined {
  const parts = line.trim().split(/\s+/);
  const [type, blob] = parts;
  if (!type || !blob || !/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return undefined;
  const raw = Buffer.from(blob, 'base64');
  if (raw.length < 4) return undefined;
  const typeLen = raw.readUInt32BE(0);
  if (raw.subarray(4, 4 + typeLen).toString('latin1') !== type) return undefined;
  return blob;
}

function checkReferences(t: Topology, p: Problems): void {
  unique(p, 'cells', t.cells, 'id', (c) => String(c.id));
  unique(p, 'cells', t.cells, 'name', (c) => c.name);
  unique(p, 'organizations', t.organizations, 'id', (o) => String(o.id));
  unique(p, 'organizations', t.organizations, 'path', (o) => o.path);
  unique(p, 'namespaces', t.namespaces, 'id', (n) => String(n.id));
  unique(p, 'namespaces', t.namespaces, 'path', (n) => n.path);
  unique(p, 'projects', t.projects, 'id', (x) => String(x.id));
  unique(p, 'projects', t.projects, 'full path', (x) => `${x.namespace}/${x.path}`);
  unique(p, 'users', t.users, 'id', (u) => String(u.id));
  unique(p, 'users', t.users, 'username', (u) => u.username);
  unique(p, 'members', t.members, 'membership', (m) => `${m.user} in ${m.namespace ?? m.project}`);
  unique(p, 'keys', t.keys, 'id', (k) => String(k.id));
  unique(p, 'keys', t.keys, 'key', (k) => publicKeyBlob(k.key) ?? k.key);
  unique(p, 'fixedRoutes', t.fixedRoutes, 'path', (r) => r.path);

  if (!isHttpUrl(t.externalUrl))
    p.add('externalUrl', `must be an http(s) URL, got ${JSON.stringify(t.externalUrl)}`);
  const legacy = t.cells.filter((c) => c.legacy === true);
  if (legacy.length !== 1) {
    p.add('cells', `exactly one cell must have "legacy": true, found ${legacy.length}`);
  }

  const cells = new Map(t.cells.map((c) => [c.name, c]));
  const orgs = new Map(t.organizations.map((o) => [o.path.toLowerCase(), o]));
  const namespaces = new Map(t.namespaces.map((n) => [n.path.toLowerCase(), n]));
  const users = new Set(t.users.map((u) => u.username.toLowerCase()));
  const cellNames = [...cells.keys()].join(', ');

  t.cells.forEach((c, i) => {
    const where = label('cells', i, c);
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
  });
  t.organizations.forEach((o, i) => {
    const where = label('organizations', i, o);
    if (!PATH_SEGMENT.test(o.path))
      p.add(where, `field "path" is not a valid path segment: ${JSON.stringify(o.path)}`);
    if (!cells.has(o.cell)) p.add(where, `field "cell": no cell named "${o.cell}" (cells: ${cellNames})`);
  });
  t.namespaces.forEach((n, i) => {
    const where = label('namespaces', i, n);
    if (!PATH_SEGMENT.test(n.path) || n.path.endsWith('.git')) {
      p.add(where, `field "path" is not a valid path segment: ${JSON.stringify(n.path)}`);
    }
    if (n.kind !== 'group' && n.kind !== 'user')
      p.add(where, `field "kind" must be "group" or "user", got "${n.kind}"`);
    if (!orgs.has(n.organization.toLowerCase())) {
      p.add(where, `field "organization": no organization with path "${n.organization}"`);
    }
  });
  t.projects.forEach((x, i) => {
    const where = label('projects', i, x);
    if (
      normalizeProjectPath(`${x.namespace}/${x.path}`) !== `${x.namespace}/${x.path}` ||
      x.path.includes('/')
    ) {
      p.add(where, `field "path" is not a valid project path: ${JSON.stringify(x.path)}`);
    }
    if (!['private', 'internal', 'public'].includes(x.visibility)) {
      p.add(where, `field "visibility" must be private, internal or public, got "${x.visibility}"`);
    }
    const ns = namespaces.get(x.namespace.toLowerCase());
    if (!ns) {
      p.add(where, `field "namespace": no namespace with path "${x.namespace}"`);
    } else {
      const cell = cells.get(orgs.get(ns.organization.toLowerCase())?.cell ?? '');
      if (cell && !(x.storage in cell.gitaly.storages)) {
        p.add(
          where,
          `field "storage": cell "${cell.name}" that owns the project has no storage "${x.storage}"`,
        );
      }
    }
    x.protectedBranches.forEach((pb, j) => {
      if (!PUSH_ACCESS_LEVELS.includes(pb.pushAccessLevel)) {
        p.add(
          `${where} protectedBranches[${j}]`,
          `field "pushAccessLevel" must be one of ${PUSH_ACCESS_LEVELS.join(', ')}, got ${pb.pushAccessLevel}`,
        );
      }
    });
  });
  t.users.forEach((u, i) => {
    if (!orgs.has(u.defaultOrganization.toLowerCase())) {
      p.add(
        label('users', i, u),
        `field "defaultOrganization": no organization with path "${u.defaultOrganization}"`,
      );
    }
  });
  const projects = new Set(t.projects.map((x) => `${x.namespace}/${x.path}`.toLowerCase()));
  t.members.forEach((m, i) => {
    const where = label('members', i, m);
    if (!users.has(m.user.toLowerCase())) p.add(where, `field "user": no user "${m.user}"`);
    if ((m.namespace === undefined) === (m.project === undefined)) {
      p.add(where, 'exactly one of the fields "namespace" (group membership) and "project" must be set');
    } else if (m.namespace !== undefined && !namespaces.has(m.namespace.toLowerCase())) {
      p.add(where, `field "namespace": no namespace "${m.namespace}"`);
    } else if (m.project !== undefined && !projects.has(m.project.toLowerCase())) {
      p.add(where, `field "project": no project "${m.project}"`);
    }
    if (!ACCESS_LEVELS.includes(m.accessLevel)) {
      p.add(where, `field "accessLevel" must be one of ${ACCESS_LEVELS.join(', ')}, got ${m.accessLevel}`);
    }
  });
  t.keys.forEach((k, i) => {
    const where = label('keys', i, k);
    if (!users.has(k.user.toLowerCase())) p.add(where, `field "user": no user "${k.user}"`);
    if (publicKeyBlob(k.key) === undefined) {
      p.add(where, 'field "key" must be an OpenSSH public key line "<type> <base64> [comment]"');
    }
  });
  t.fixedRoutes.forEach((r, i) => {
    const where = label('fixedRoutes', i, r);
    if (!/^\/[^?#\s]*[^/?#\s]$/.test(r.path)) {
      p.add(where, `field "path" must start with "/" and not end with "/", got ${JSON.stringify(r.path)}`);
    }
    if (!cells.has(r.cell)) p.add(where, `field "cell": no cell named "${r.cell}" (cells: ${cellNames})`);
  });
}

/** Returns the value typed as a Topology, or throws CELL_TOPOLOGY_INVALID listing every problem. */
export function validateTopology(value: unknown): Topology {
  const p = new Problems();
  checkShape(value, p);
  p.throwIfAny();
  const topology = value as Topology;
  checkReferences(topology, p);
  p.throwIfAny();
  return topology;
}
