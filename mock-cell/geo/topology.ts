import { type Entry, type FieldSpec, hasKind, kindOf, type Problems } from '../topology-problems.js';
import type { Topology } from '../topology-types.js';

/**
 * Validation of the topology's `geoSites` (`TopologyGeoSite`): field types, roles, the cell each
 * site belongs to, one primary per cell with secondaries, a Gitaly of its own for every secondary,
 * unique names and access keys.
 */
const SITE_SPEC: FieldSpec = {
  name: 'string',
  cell: 'string',
  role: 'string',
  url: 'string',
  ssh: 'string',
  gitaly: 'object?',
  accessKey: 'string',
  secretAccessKeyFile: 'string',
  fetchFromPrimary: 'string?',
};

export function checkGeoSites(topology: Topology, p: Problems): void {
  const sites: unknown = (topology as unknown as Entry).geoSites;
  if (sites === undefined) return;
  if (!Array.isArray(sites)) {
    p.add('geoSites', `must be an array, got ${kindOf(sites)}`);
    return;
  }
  const names = new Set<string>();
  const keys = new Set<string>();
  const primaries = new Map<string, number>();
  sites.forEach((raw: unknown, i) => {
    const where = `geoSites[${i}]`;
    if (!hasKind(raw, 'object')) {
      p.add(where, `must be an object, got ${kindOf(raw)}`);
      return;
    }
    const site = raw as Entry;
    if (!p.fields(where, site, SITE_SPEC)) return;
    const { name, cell, role, accessKey, gitaly, fetchFromPrimary } = site as Record<string, string>;
    if (role !== 'primary' && role !== 'secondary')
      p.add(where, `field "role" must be "primary" or "secondary", got ${JSON.stringify(role)}`);
    if (!topology.cells.some((c) => c.name === cell)) p.add(where, `names unknown cell "${cell}"`);
    if (role === 'primary') primaries.set(cell as string, (primaries.get(cell as string) ?? 0) + 1);
    if (role === 'secondary' && gitaly === undefined) p.add(where, 'a secondary needs its own "gitaly"');
    if (fetchFromPrimary !== undefined && fetchFromPrimary !== 'behind' && fetchFromPrimary !== 'always')
      p.add(where, `field "fetchFromPrimary" must be "behind" or "always", got "${fetchFromPrimary}"`);
    if (names.has(name as string)) p.add(where, `site name "${name}" is used twice`);
    if (keys.has(accessKey as string)) p.add(where, `access key "${accessKey}" is used twice`);
    names.add(name as string);
    keys.add(accessKey as string);
  });
  for (const site of sites as Entry[]) {
    if (site?.role !== 'secondary') continue;
    const count = primaries.get(site.cell as string) ?? 0;
    if (count !== 1)
      p.add('geoSites', `cell "${site.cell}" has secondaries and ${count} primaries (needs 1)`);
  }
}
