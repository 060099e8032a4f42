import { readFileSync } from 'node:fs';
import { ConfigError } from '../../lib/config.js';
import { jwtKey } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { TopologyInvalid } from '../errors.js';
import { TopologyModel } from '../topology.js';
import type { TopologyGeoSite } from '../topology-types.js';
import type { GeoNodeKey } from './token.js';

/**
 * The Geo role of one cell app: the site it is (`self`), the cell's primary, and every node's key
 * (all sites know all keys, as GitLab replicates `geo_nodes`). A cell without Geo sites has none.
 */
export interface GeoRole {
  self: TopologyGeoSite;
  primary: TopologyGeoSite;
  secondaries: TopologyGeoSite[];
  selfKey: GeoNodeKey;
  nodes: GeoNodeKey[];
}

function nodeKey(site: TopologyGeoSite): GeoNodeKey {
  const secret = readSecretFile(site.secretAccessKeyFile, `Geo secret access key of ${site.name}`);
  return { site: site.name, accessKey: site.accessKey, secret: jwtKey(secret) };
}

/**
 * The role of the app serving `cell`: the site named `siteName` (a secondary's process), else the
 * cell's primary when the topology has one. Reads every node's secret (ConfigError when missing).
 */
export function geoRoleFor(model: TopologyModel, cell: string, siteName?: string): GeoRole | undefined {
  const sites = model.geoSites().filter((s) => s.cell === cell);
  const primary = sites.find((s) => s.role === 'primary');
  const self = siteName === undefined ? primary : sites.find((s) => s.name === siteName);
  if (!self || !primary) return undefined;
  const nodes = sites.map(nodeKey);
  return {
    self,
    primary,
    secondaries: sites.filter((s) => s.role === 'secondary'),
    selfKey: nodes.find((n) => n.site === self.name) as GeoNodeKey,
    nodes,
  };
}

/**
 * The model a secondary site's process serves: the topology with the site's cell on the site's own
 * Gitaly and storages (its replicas), so every payload and repository path is the secondary's.
 */
export function loadSiteModel(path: string, siteName: string): TopologyModel {
  let value: { cells: Array<{ name: string; gitaly: unknown }>; geoSites?: TopologyGeoSite[] };
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw TopologyInvalid(`cannot read topology file ${path}: ${(err as Error).message}`, err);
  }
  const site = TopologyModel.fromJson(value)
    .geoSites()
    .find((s) => s.name === siteName);
  if (site?.role !== 'secondary' || !site.gitaly) {
    throw new ConfigError(`geoSite: no secondary Geo site "${siteName}" in the topology`);
  }
  const cell = value.cells.find((c) => c.name === site.cell);
  if (cell) cell.gitaly = site.gitaly;
  return TopologyModel.fromJson(value);
}
