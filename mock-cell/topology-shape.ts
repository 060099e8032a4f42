import { type Entry, type FieldSpec, hasKind, kindOf, label, type Problems } from './topology-problems.js';
import type { Topology } from './topology-types.js';

/** The first pass of topology validation: every section and entry has fields of the right types. */

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
} satisfies Record<keyof Omit<Topology, 'externalUrl' | 'geoSites' | 'seed000Routing'>, FieldSpec>;

const GITALY_SPEC: FieldSpec = { address: 'string', storages: 'object' };
const PROTECTED_BRANCH_SPEC: FieldSpec = { name: 'string', pushAccessLevel: 'int', allowForcePush: 'bool' };

export function checkShape(value: unknown, p: Problems): void {
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
      checkEntryShape(section, spec, entry, i, p);
    });
  }
}

function checkEntryShape(section: string, spec: FieldSpec, entry: unknown, i: number, p: Problems): void {
  if (!hasKind(entry, 'object')) {
    p.add(`${section}[${i}]`, `must be an object, got ${kindOf(entry)}`);
    return;
  }
  const e = entry as Entry;
  const where = label(section, i, e);
  if (!p.fields(where, e, spec)) return;
  if (section === 'cells') checkGitalyShape(where, e.gitaly as Entry, p);
  if (section === 'projects') checkProtectedBranchesShape(where, e.protectedBranches as unknown[], p);
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

function checkProtectedBranchesShape(where: string, branches: unknown[], p: Problems): void {
  branches.forEach((pb, j) => {
    const at = `${where} protectedBranches[${j}]`;
    if (!hasKind(pb, 'object')) p.add(at, `must be an object, got ${kindOf(pb)}`);
    else p.fields(at, pb as Entry, PROTECTED_BRANCH_SPEC);
  });
}
