import { publicKeyBlob } from './public-key.js';
import { label, type Problems } from './topology-problems.js';
import type { Topology } from './topology-types.js';

/** The uniqueness pass of topology validation: ids, paths, names, memberships and keys do not repeat. */

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

export function checkUniqueness(t: Topology, p: Problems): void {
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
}
