import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { StackJson } from '../lib/contracts/stack.js';
import type { TopologyGeoSite } from '../mock-cell/topology-types.js';
import { ensureSecret } from './demo-data.js';
import { HOST, type StackPaths, type StackPorts } from './layout.js';
import { routerConfig } from './router-plan.js';
import type { PlannedService } from './stack-config.js';
import type { World, WorldCell } from './topology-file-resolve.js';

const run = promisify(execFile);

/**
 * The Geo half of the local stack: each cell the topology file's `geo` names is a Geo primary and
 * gets one secondary site, `<cell>-geo`, with its own mock Rails (a mock-cell process with
 * `geoSite`), its own mock Gitaly holding replica repositories, its own bridge, and its own SSH entry,
 * a router in `routing: "site"` mode (the secondary's gitlab-shell). Both sites' Geo node keys are
 * secret files (mode 600); the topology's `geoSites` names them.
 */

export const geoSiteName = (cell: Pick<WorldCell, 'name'>) => `${cell.name}-geo`;

/** The cells of the world that have a Geo secondary, in the order of the file's `geo`. */
export function geoCells(world: World): WorldCell[] {
  return world.geo.flatMap((name) => world.cells.filter((c) => c.name === name));
}

export function geoPaths(paths: StackPaths, cell: Pick<WorldCell, 'name'>) {
  const site = join(paths.root, 'geo', geoSiteName(cell));
  return {
    storage: join(site, 'repositories'),
    gitalyRuntime: join(site, 'gitaly-runtime'),
    primarySecret: join(paths.secretsDir, `geo_${cell.name}_secret_access_key`),
    secondarySecret: join(paths.secretsDir, `geo_${geoSiteName(cell)}_secret_access_key`),
  };
}

const railsUrl = (ports: StackPorts, cell: WorldCell) => `http://${HOST}:${ports.geo(cell.id).rails}`;
const bridgeUrl = (ports: StackPorts, cell: WorldCell) => `http://${HOST}:${ports.geo(cell.id).bridge}`;
const at = (port: number) => `${HOST}:${port}`;

export async function ensureGeoSecrets(world: World, paths: StackPaths): Promise<void> {
  for (const cell of geoCells(world)) {
    const g = geoPaths(paths, cell);
    await Promise.all([ensureSecret(g.primarySecret), ensureSecret(g.secondarySecret)]);
  }
}

/** The topology's `geoSites`: per Geo cell, the primary (its bridge and `primarySsh`) and its secondary. */
export function geoSites(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  primarySsh: string,
): TopologyGeoSite[] {
  return geoCells(world).flatMap((cell): TopologyGeoSite[] => {
    const g = geoPaths(paths, cell);
    const site = geoSiteName(cell);
    return [
      {
        name: cell.name,
        cell: cell.name,
        role: 'primary',
        url: `http://${HOST}:${ports.bridge(cell.id)}`,
        ssh: primarySsh,
        accessKey: `${cell.name}-access-key`,
        secretAccessKeyFile: g.primarySecret,
      },
      {
        name: site,
        cell: cell.name,
        role: 'secondary',
        url: bridgeUrl(ports, cell),
        ssh: at(ports.geo(cell.id).ssh),
        gitaly: { address: `tcp://${at(ports.geo(cell.id).gitaly)}`, storages: { default: g.storage } },
        accessKey: `${site}-access-key`,
        secretAccessKeyFile: g.secondarySecret,
      },
    ];
  });
}

/**
 * The secondaries' replicas, one per project of each primary: a mirror clone when missing, else
 * fetched up to date (the backfill a secondary does before it serves; the stack is down meanwhile,
 * so the primary's folder is read directly). Pushes while the stack runs replicate by `mock-cell/geo/`.
 */
export async function ensureReplicas(
  world: World,
  repositories: Record<string, string>,
  paths: StackPaths,
): Promise<void> {
  for (const cell of geoCells(world)) {
    const storage = geoPaths(paths, cell).storage;
    const primaryStorage = paths.storage(cell.name);
    for (const dir of Object.values(repositories)) {
      if (!dir.startsWith(`${primaryStorage}/`)) continue;
      const replica = join(storage, dir.slice(primaryStorage.length + 1));
      if (!existsSync(join(replica, 'HEAD'))) {
        await mkdir(dirname(replica), { recursive: true });
        await run('git', ['clone', '--quiet', '--mirror', dir, replica]);
      } else {
        await run('git', ['--git-dir', replica, 'fetch', '--quiet', '--prune', dir, '+refs/*:refs/*']);
      }
    }
  }
}

function spec(paths: StackPaths, name: string, service: string, listen: Array<[number, string]>) {
  return {
    name,
    service,
    configFile: `${paths.configDir}/${name}.json`,
    listen: listen.map(([port, what]) => ({ address: at(port), what })),
  };
}

interface GeoPlan {
  paths: StackPaths;
  ports: StackPorts;
  logLevel: string;
  cell: WorldCell;
}

function planGeoGitaly({ paths, ports, logLevel, cell }: GeoPlan): PlannedService {
  const g = geoPaths(paths, cell);
  const site = geoSiteName(cell);
  const port = ports.geo(cell.id).gitaly;
  return {
    tier: 0,
    spec: spec(paths, `gitaly-${site}`, 'mock-gitaly', [[port, `mock Gitaly of ${site}`]]),
    config: {
      listen: at(port),
      storages: { default: g.storage },
      tokenFile: paths.gitalyToken,
      gitlabUrl: railsUrl(ports, cell),
      gitlabSecretFile: paths.shellSecret,
      runtimeDir: g.gitalyRuntime,
      logLevel,
    },
  };
}

function planGeoRails({ paths, ports, logLevel, cell }: GeoPlan): PlannedService {
  const site = geoSiteName(cell);
  const port = ports.geo(cell.id).rails;
  return {
    tier: 0,
    spec: spec(paths, `mock-cell-${site}`, 'mock-cell', [[port, `mock Rails of ${site}`]]),
    config: {
      topologyFile: paths.topology,
      listen: [{ cell: cell.name, address: at(port) }],
      geoSite: site,
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      gitalyTokenFile: paths.gitalyToken,
      logLevel,
    },
  };
}

function planGeoBridge({ paths, ports, logLevel, cell }: GeoPlan): PlannedService {
  const site = geoSiteName(cell);
  const port = ports.geo(cell.id).bridge;
  return {
    tier: 1,
    spec: spec(paths, `bridge-${site}`, 'bridge', [[port, `bridge of ${site}`]]),
    config: {
      listen: at(port),
      railsUrl: railsUrl(ports, cell),
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      logLevel,
    },
  };
}

/** The secondary's SSH entry: a router serving the one site (gitlab-shell of the secondary). */
function planGeoRouter({ paths, ports, logLevel, cell }: GeoPlan): PlannedService {
  const site = geoSiteName(cell);
  const geo = ports.geo(cell.id);
  return {
    tier: 2,
    spec: spec(paths, `router-${site}`, 'router', [
      [geo.ssh, `SSH of ${site}`],
      [geo.http, `router HTTP of ${site}`],
    ]),
    config: routerConfig(paths, {
      routing: 'site',
      sshListen: at(geo.ssh),
      httpListen: at(geo.http),
      region: cell.region,
      cells: [
        { id: cell.id, name: cell.name, legacy: true, region: cell.region, url: bridgeUrl(ports, cell) },
      ],
      logLevel,
    }),
  };
}

export function planGeoServices(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  logLevel: string,
): PlannedService[] {
  return geoCells(world).flatMap((cell) =>
    [planGeoGitaly, planGeoRails, planGeoBridge, planGeoRouter].map((plan) =>
      plan({ paths, ports, logLevel, cell }),
    ),
  );
}

export function geoStackJson(world: World, paths: StackPaths, ports: StackPorts): StackJson['geo'] {
  return geoCells(world).map((cell) => ({
    cell: cell.name,
    site: geoSiteName(cell),
    ssh: at(ports.geo(cell.id).ssh),
    rails: railsUrl(ports, cell),
    bridge: bridgeUrl(ports, cell),
    gitaly: at(ports.geo(cell.id).gitaly),
    storage: geoPaths(paths, cell).storage,
  }));
}
