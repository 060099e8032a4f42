import { mkdir, readFile, writeFile } from 'node:fs/promises';
import {
  type ComposeService,
  composeGeoServices,
  composeGeoSites,
  composeRouterTopology,
  geoServiceName,
  ROUTER_TOPOLOGY,
  TOPOLOGY_SERVICE,
} from './compose-plan.js';
import { ensureRepositories, ensureSecretsAndKeys } from './demo-data.js';
import { ensureGeoSecrets, ensureReplicas, geoCells, geoPaths } from './geo-plan.js';
import {
  COMPOSE_NET,
  HOST,
  type StackCell,
  type StackNet,
  type StackPaths,
  stackPaths,
  stackPorts,
} from './layout.js';
import { type PlannedService, planServices } from './stack-config.js';
import { worldTopology } from './topology-file-convert.js';
import { demoWorld, loadTopologyFile } from './topology-file-load.js';
import type { World } from './topology-file-resolve.js';
import { planTopologyService } from './topology-plan.js';

export { TOPOLOGY_SERVICE };

/** The compose world: the topology file STACK_TOPOLOGY names (mounted into the init container), else the demo. */
export function composeWorld(env: NodeJS.ProcessEnv = {}): World {
  const file = env.STACK_TOPOLOGY;
  return file ? loadTopologyFile(file) : demoWorld();
}

/**
 * Where the services of the compose world reach each other: by compose service name, except that
 * `gitalyHosts` may point a cell at another Gitaly container (the `gitlab` profile's real Gitaly).
 */
export function composeNet(gitalyHosts: Record<string, string> = {}): StackNet {
  return {
    bind: COMPOSE_NET.bind,
    host: (service, cell) =>
      (service === 'gitaly' && cell && gitalyHosts[cell.name]) || COMPOSE_NET.host(service, cell),
  };
}

/**
 * Config of GitLab's own Gitaly (`gitlab` profile of compose.yaml, not exercised here) for `cell`:
 * the same storage volume, token, Rails and shell secret as that cell's mock Gitaly. Gitaly takes the
 * token as a literal, so this file holds a secret (mode 600).
 */
export function gitalyToml(paths: StackPaths, port: number, cell: StackCell, token: string): string {
  const rails = `http://${COMPOSE_NET.host('rails', cell)}:${stackPorts(0).rails(cell.id)}`;
  return [
    `# GitLab Gitaly for ${cell.name}, written by stack/compose-init.ts`,
    `listen_addr = "0.0.0.0:${port}"`,
    `runtime_dir = "${paths.gitalyRuntime(cell.name)}-gitlab"`,
    'bin_dir = "/usr/local/bin"',
    '[git]',
    'use_bundled_binaries = true',
    '[[storage]]',
    'name = "default"',
    `path = "${paths.storage(cell.name)}"`,
    '[auth]',
    `token = "${token}"`,
    '[gitlab]',
    `url = "${rails}"`,
    `secret_file = "${paths.shellSecret}"`,
    '[hooks]',
    'custom_hooks_dir = "/tmp/gitaly-custom-hooks"',
    '[logging]',
    'format = "json"',
    'level = "info"',
    '',
  ].join('\n');
}

/**
 * The Topology Service's container: the local stack's plan (`stack/topology-plan.ts`: ports, cells in
 * the seed's order, `sessionPrefix` `cell-<id>`) but binding `0.0.0.0`, and each cell's `address` (what
 * `proxy.address` answers) the host of that cell's bridge container.
 */
export function composeTopologyService(
  paths: StackPaths,
  net: StackNet,
  world: World = demoWorld(),
): PlannedService & { grpc: string } {
  const ports = stackPorts(0);
  const planned = planTopologyService(world, paths, ports, 'info');
  const cells = planned.config.cells as Array<Record<string, unknown> & { id: number }>;
  return {
    ...planned,
    grpc: `${TOPOLOGY_SERVICE}:${ports.topologyGrpc}`,
    config: {
      ...planned.config,
      grpcListen: `${net.bind}:${ports.topologyGrpc}`,
      httpListen: `${net.bind}:${ports.topologyHttp}`,
      cells: cells.map((c) => {
        const cell = world.cells.find((d) => d.id === c.id) ?? { id: c.id, name: '' };
        return { ...c, address: net.host('bridge', cell) };
      }),
    },
  };
}

/** The cell whose storage the `gitlab` profile's real Gitaly serves (the spare cell, empty at first). */
export const GITLAB_GITALY_CELL: StackCell = demoWorld().cells[3] ?? { id: 4, name: 'cell_eu1' };

/**
 * Every container of the compose world but `init` and `client`, with its config: the Topology
 * Service, per cell its Gitaly, Rails (a mock-cell process of its own, registering the cell's claims)
 * and bridge (also on the shared cell-endpoint port, for the topology router), the `learn` router, the
 * `topology` router, and per cell of the file's `geo` its secondary site (`compose-plan.ts`).
 */
export function composeServices(world: World, paths: StackPaths, net: StackNet): ComposeService[] {
  const ports = stackPorts(0);
  const ts = composeTopologyService(paths, net, world);
  const out: ComposeService[] = [{ ...ts, container: TOPOLOGY_SERVICE }];
  const cellOf = (name: string) => world.cells.find((c) => name.endsWith(`-${c.name}`));
  for (const planned of planServices(world, paths, ports, net, 'info')) {
    const { service } = planned.spec;
    if (service === 'mock-cell') {
      for (const cell of world.cells) {
        const listen = (planned.config.listen as Array<{ cell: string }>).filter((l) => l.cell === cell.name);
        const name = `mock-cell-${cell.name}`;
        const spec = { ...planned.spec, name, configFile: `${paths.configDir}/${name}.json` };
        const config = { ...planned.config, listen, topologyService: ts.grpc };
        out.push({ ...planned, spec, config, container: net.host('rails', cell) });
      }
    } else if (service === 'router') {
      out.push({ ...planned, container: COMPOSE_NET.host('router') });
    } else {
      const cell = cellOf(planned.spec.name);
      const kind = service === 'bridge' ? 'bridge' : 'gitaly';
      const config =
        kind === 'bridge' ? { ...planned.config, shellListen: `${net.bind}:${ports.shell}` } : planned.config;
      out.push({ ...planned, config, container: COMPOSE_NET.host(kind, cell) });
    }
  }
  return [...out, composeRouterTopology(world, paths), ...composeGeoServices(world, paths)];
}

/** `known_hosts` for every router's SSH port, as the client container and as the host reach it. */
async function writeKnownHosts(paths: StackPaths, world: World): Promise<string> {
  const ports = stackPorts(0);
  const hostKey = (await readFile(`${paths.hostKey}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
  const entries: Array<[string, number]> = [
    [COMPOSE_NET.host('router'), ports.routerSsh],
    [ROUTER_TOPOLOGY, ports.routerTopologySsh],
    ...geoCells(world).map((c): [string, number] => [geoServiceName('router', c), ports.geo(c.id).ssh]),
  ];
  const file = `${paths.root}/known_hosts`;
  const line = (host: string, port: number) => `[${host}]:${port} ${hostKey}\n`;
  await writeFile(file, entries.map(([host, port]) => line(host, port) + line(HOST, port)).join(''));
  return file;
}

/** `COMPOSE_GITALY_<CELL>` settings: the cells pointed at another Gitaly container. */
function gitalyHostsOf(world: World, env: NodeJS.ProcessEnv): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const cell of world.cells) {
    const host = env[`COMPOSE_GITALY_${cell.name.toUpperCase()}`];
    if (host) hosts[cell.name] = host;
  }
  return hosts;
}

/**
 * The `init` service of compose.yaml: writes the world's data (STACK_TOPOLOGY, default the demo) and
 * one config file per container into STACK_DATA_DIR (volumes shared by the containers), with services
 * reaching each other by their compose names; the Geo secondaries' replicas and node keys; the
 * `known_hosts` of every router; and the `gitlab` profile's Gitaly config. `COMPOSE_GITALY_<CELL>`
 * (e.g. `COMPOSE_GITALY_CELL_EU1=gitaly-gitlab`) points a cell at another Gitaly container.
 */
export async function composeInit(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const world = composeWorld(env);
  const paths = stackPaths(dataDir);
  const ports = stackPorts(0);
  await mkdir(paths.configDir, { recursive: true });
  const publicKeys = await ensureSecretsAndKeys(paths, world);
  const net = composeNet(gitalyHostsOf(world, env));
  const topology = worldTopology(world, ports, paths, publicKeys, net);
  if (world.geo.length > 0) {
    await ensureGeoSecrets(world, paths);
    topology.geoSites = composeGeoSites(world, paths);
  }
  await writeFile(paths.topology, `${JSON.stringify(topology, null, 2)}\n`);
  const repositories = await ensureRepositories(topology, world);
  for (const cell of geoCells(world)) await mkdir(geoPaths(paths, cell).storage, { recursive: true });
  await ensureReplicas(world, repositories, paths);
  const written = [await writeKnownHosts(paths, world)];
  for (const s of composeServices(world, paths, net)) {
    await writeFile(s.spec.configFile, `${JSON.stringify(s.config, null, 2)}\n`);
    written.push(s.spec.configFile);
  }
  const cell = world.cells.find((c) => c.name === GITLAB_GITALY_CELL.name);
  if (cell) {
    const token = (await readFile(paths.gitalyToken, 'utf8')).trim();
    const toml = `${paths.configDir}/gitaly-gitlab.toml`;
    await writeFile(toml, gitalyToml(paths, ports.gitaly(cell.id), cell, token), { mode: 0o600 });
    written.push(toml);
  }
  return written;
}

if (process.argv[1]?.endsWith('compose-init.js')) {
  composeInit(process.env.STACK_DATA_DIR ?? '/data', process.env).then(
    (files) => process.stdout.write(`compose init wrote ${files.length} config files\n`),
    (err: unknown) => {
      process.stderr.write(`compose init failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
