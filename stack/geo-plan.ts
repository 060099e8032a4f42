import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { StackJson } from '../lib/contracts/stack.js';
import type { TopologyGeoSite } from '../mock-cell/topology-types.js';
import { ensureSecret } from './demo-data.js';
import { DEMO_CELLS, HOST, type StackPaths, type StackPorts } from './layout.js';
import type { PlannedService } from './stack-config.js';

const run = promisify(execFile);

/**
 * The Geo half of the local stack (`npm start`): the legacy cell `cell_us0` is a Geo primary and
 * gets one secondary site, `cell_us0-geo`, with its own mock Rails (a mock-cell process with
 * `geoSite`), its own mock Gitaly holding replica repositories, its own bridge, and its own SSH entry,
 * a router in `routing: "site"` mode (the secondary's gitlab-shell). Both sites' Geo node keys are
 * secret files (mode 600); the topology's `geoSites` names them.
 */
const CELL = DEMO_CELLS[0];
export const GEO_SITE = `${CELL.name}-geo`;

export function geoPaths(paths: StackPaths) {
  const site = join(paths.root, 'geo', GEO_SITE);
  return {
    storage: join(site, 'repositories'),
    gitalyRuntime: join(site, 'gitaly-runtime'),
    primarySecret: join(paths.secretsDir, `geo_${CELL.name}_secret_access_key`),
    secondarySecret: join(paths.secretsDir, `geo_${GEO_SITE}_secret_access_key`),
  };
}

const railsUrl = (ports: StackPorts) => `http://${HOST}:${ports.geoRails}`;
const bridgeUrl = (ports: StackPorts) => `http://${HOST}:${ports.geoBridge}`;

export async function ensureGeoSecrets(paths: StackPaths): Promise<void> {
  const g = geoPaths(paths);
  await Promise.all([ensureSecret(g.primarySecret), ensureSecret(g.secondarySecret)]);
}

/** The topology's `geoSites`: cell_us0 (primary, its bridge and the main router) and its secondary. */
export function geoSites(paths: StackPaths, ports: StackPorts): TopologyGeoSite[] {
  const g = geoPaths(paths);
  return [
    {
      name: CELL.name,
      cell: CELL.name,
      role: 'primary',
      url: `http://${HOST}:${ports.bridge(CELL.id)}`,
      ssh: `${HOST}:${ports.routerSsh}`,
      accessKey: `${CELL.name}-access-key`,
      secretAccessKeyFile: g.primarySecret,
    },
    {
      name: GEO_SITE,
      cell: CELL.name,
      role: 'secondary',
      url: bridgeUrl(ports),
      ssh: `${HOST}:${ports.geoSsh}`,
      gitaly: { address: `tcp://${HOST}:${ports.geoGitaly}`, storages: { default: g.storage } },
      accessKey: `${GEO_SITE}-access-key`,
      secretAccessKeyFile: g.secondarySecret,
    },
  ];
}

/**
 * The secondary's replicas, one per project of the primary: a mirror clone when missing, else
 * fetched up to date (the backfill a secondary does before it serves; the stack is down meanwhile,
 * so the primary's folder is read directly). Pushes while the stack runs replicate by `mock-cell/geo/`.
 */
export async function ensureReplicas(repositories: Record<string, string>, paths: StackPaths): Promise<void> {
  const storage = geoPaths(paths).storage;
  const primaryStorage = paths.storage(CELL.name);
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

function spec(paths: StackPaths, name: string, service: string, listen: Array<[number, string]>) {
  return {
    name,
    service,
    configFile: `${paths.configDir}/${name}.json`,
    listen: listen.map(([port, what]) => ({ address: `${HOST}:${port}`, what })),
  };
}

const at = (port: number) => `${HOST}:${port}`;

function planGeoGitaly(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService {
  const g = geoPaths(paths);
  return {
    tier: 0,
    spec: spec(paths, `gitaly-${GEO_SITE}`, 'mock-gitaly', [[ports.geoGitaly, `mock Gitaly of ${GEO_SITE}`]]),
    config: {
      listen: at(ports.geoGitaly),
      storages: { default: g.storage },
      tokenFile: paths.gitalyToken,
      gitlabUrl: railsUrl(ports),
      gitlabSecretFile: paths.shellSecret,
      runtimeDir: g.gitalyRuntime,
      logLevel,
    },
  };
}

function planGeoRails(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService {
  return {
    tier: 0,
    spec: spec(paths, `mock-cell-${GEO_SITE}`, 'mock-cell', [[ports.geoRails, `mock Rails of ${GEO_SITE}`]]),
    config: {
      topologyFile: paths.topology,
      listen: [{ cell: CELL.name, address: at(ports.geoRails) }],
      geoSite: GEO_SITE,
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      gitalyTokenFile: paths.gitalyToken,
      logLevel,
    },
  };
}

function planGeoBridge(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService {
  return {
    tier: 1,
    spec: spec(paths, `bridge-${GEO_SITE}`, 'bridge', [[ports.geoBridge, `bridge of ${GEO_SITE}`]]),
    config: {
      listen: at(ports.geoBridge),
      railsUrl: railsUrl(ports),
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      logLevel,
    },
  };
}

/** The secondary's SSH entry: a router serving the one site (gitlab-shell of the secondary). */
function planGeoRouter(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService {
  return {
    tier: 2,
    spec: spec(paths, `router-${GEO_SITE}`, 'router', [
      [ports.geoSsh, `SSH of ${GEO_SITE}`],
      [ports.geoHttp, `router HTTP of ${GEO_SITE}`],
    ]),
    config: {
      routing: 'site',
      sshListen: at(ports.geoSsh),
      httpListen: at(ports.geoHttp),
      hostKeyFiles: paths.hostKeys,
      shellSecretFile: paths.shellSecret,
      region: CELL.region,
      cells: [{ id: CELL.id, name: CELL.name, legacy: true, region: CELL.region, url: bridgeUrl(ports) }],
      logLevel,
    },
  };
}

export function planGeoServices(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService[] {
  return [planGeoGitaly, planGeoRails, planGeoBridge, planGeoRouter].map((plan) =>
    plan(paths, ports, logLevel),
  );
}

export function geoStackJson(paths: StackPaths, ports: StackPorts): Pick<StackJson, 'geo'> {
  return {
    geo: [
      {
        cell: CELL.name,
        site: GEO_SITE,
        ssh: `${HOST}:${ports.geoSsh}`,
        rails: railsUrl(ports),
        bridge: bridgeUrl(ports),
        gitaly: `${HOST}:${ports.geoGitaly}`,
        storage: geoPaths(paths).storage,
      },
    ],
  };
}
