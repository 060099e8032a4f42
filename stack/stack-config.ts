import type { StackEdge, StackJson } from '../lib/contracts/stack.js';
import type { Topology } from '../mock-cell/topology-types.js';
import { planEdge, type RunningEdge } from './edge-plan.js';
import { geoStackJson, planGeoServices } from './geo-plan.js';
import { HOST, type StackNet, type StackPaths, type StackPorts } from './layout.js';
import { routerConfig } from './router-plan.js';
import type { ServiceSpec } from './supervisor.js';
import type { World, WorldCell } from './topology-file-resolve.js';
import {
  bridgeShellListen,
  planRouterTopology,
  planTopologyService,
  routerCells,
  routerRegion,
  shellEndpoint,
  topologyServiceAddresses,
  topologyStackJson,
} from './topology-plan.js';

/** One service's config file content and how the supervisor starts it. */
export interface PlannedService {
  spec: ServiceSpec;
  config: Record<string, unknown>;
  tier: number;
}

/** What every planner needs: where things are, which ports, how services reach each other. */
interface Plan {
  world: World;
  paths: StackPaths;
  ports: StackPorts;
  net: StackNet;
  logLevel: string;
  /** The Topology Service half (`topology-plan.ts`): local stacks only, not compose. */
  topology: boolean;
  /** The edge in front of every cell (`edge-plan.ts`): local stacks only; absent = none. */
  edge: RunningEdge | undefined;
}

const configFile = (plan: Plan, name: string) => `${plan.paths.configDir}/${name}.json`;
const bindAt = (plan: Plan, port: number) => `${plan.net.bind}:${port}`;
const listenAt = (plan: Plan, port: number, what: string) => ({ address: bindAt(plan, port), what });

/**
 * The processes of a world and their config files (see docs/contracts.md): tier 0 the mock
 * Gitalys, the mock cell (and the Topology Service), tier 1 the bridges, tier 2 the routers the
 * world asks for. `topology` (the local stack; compose has none of it) adds the Topology Service,
 * the `topology` router and the bridges' shell endpoints; `geo` (local only too) the Geo
 * secondaries of the file's `geo` (`geo-plan.ts`). Without `topology` the `learn` router always runs.
 * `edge` (local only) puts an edge on every cell's shell endpoint, the bridge behind it, and has both
 * routers dial the shell endpoints (`edge-plan.ts`).
 */
export function planServices(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  net: StackNet,
  logLevel: string,
  opts: { topology?: boolean; geo?: boolean; edge?: RunningEdge } = {},
): PlannedService[] {
  const topology = opts.topology === true;
  const edge = topology ? opts.edge : undefined;
  const plan: Plan = { world, paths, ports, net, logLevel, topology, edge };
  const learn = world.routers.learn || !plan.topology;
  return [
    ...(plan.topology ? [planTopologyService(world, paths, ports, logLevel)] : []),
    ...world.cells.map((cell) => planGitaly(plan, cell)),
    planMockCell(plan),
    ...world.cells.map((cell) => planBridge(plan, cell)),
    ...(edge ? [planEdge(world, paths, ports, edge, logLevel)] : []),
    ...(learn ? [planRouter(plan)] : []),
    ...(plan.topology && world.routers.topology ? [planRouterTopology(world, paths, ports, logLevel)] : []),
    ...(plan.topology && opts.geo ? planGeoServices(world, paths, ports, logLevel) : []),
  ];
}

function planGitaly(plan: Plan, cell: WorldCell): PlannedService {
  const { paths, ports, net } = plan;
  const name = `gitaly-${cell.name}`;
  return {
    tier: 0,
    spec: {
      name,
      service: 'mock-gitaly',
      configFile: configFile(plan, name),
      listen: [listenAt(plan, ports.gitaly(cell.id), `mock Gitaly of ${cell.name}`)],
      controls: [{ target: 'gitaly', cell: cell.name }],
    },
    config: {
      listen: bindAt(plan, ports.gitaly(cell.id)),
      storages: { default: paths.storage(cell.name) },
      tokenFile: paths.gitalyToken,
      gitlabUrl: `http://${net.host('rails', cell)}:${ports.rails(cell.id)}`,
      gitlabSecretFile: paths.shellSecret,
      runtimeDir: paths.gitalyRuntime(cell.name),
      // Names the cell in its journal entries.
      cell: cell.name,
      logLevel: plan.logLevel,
      ...(cell.gitalyConcurrency.length > 0 ? { concurrency: cell.gitalyConcurrency } : {}),
    },
  };
}

function planMockCell(plan: Plan): PlannedService {
  const { paths, ports, world } = plan;
  return {
    tier: 0,
    spec: {
      name: 'mock-cell',
      service: 'mock-cell',
      configFile: configFile(plan, 'mock-cell'),
      listen: world.cells.map((c) => listenAt(plan, ports.rails(c.id), `mock cell (Rails) of ${c.name}`)),
      controls: world.cells.map((c) => ({ target: 'rails' as const, cell: c.name })),
    },
    config: {
      topologyFile: paths.topology,
      listen: world.cells.map((c) => ({ cell: c.name, address: bindAt(plan, ports.rails(c.id)) })),
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      gitalyTokenFile: paths.gitalyToken,
      ...(plan.topology ? { topologyService: topologyServiceAddresses(ports).grpc } : {}),
      logLevel: plan.logLevel,
    },
  };
}

function planBridge(plan: Plan, cell: WorldCell): PlannedService {
  const { paths, ports, net } = plan;
  const name = `bridge-${cell.name}`;
  // With an edge, the edge holds the shell endpoint and the bridge is behind it.
  const shell = plan.topology && plan.edge === undefined;
  return {
    tier: 1,
    spec: {
      name,
      service: 'bridge',
      configFile: configFile(plan, name),
      listen: [
        listenAt(plan, ports.bridge(cell.id), `bridge of ${cell.name}`),
        listenAt(plan, ports.bridgeMetrics(cell.id), `bridge metrics of ${cell.name}`),
        ...(shell
          ? [{ address: bridgeShellListen(ports, cell), what: `shell endpoint of ${cell.name}` }]
          : []),
      ],
      controls: [{ target: 'bridge', cell: cell.name }],
    },
    config: {
      listen: bindAt(plan, ports.bridge(cell.id)),
      railsUrl: `http://${net.host('rails', cell)}:${ports.rails(cell.id)}`,
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      metricsListen: bindAt(plan, ports.bridgeMetrics(cell.id)),
      ...(shell ? { shellListen: bridgeShellListen(ports, cell) } : {}),
      cell: cell.name,
      logLevel: plan.logLevel,
    },
  };
}

function planRouter(plan: Plan): PlannedService {
  const { paths, ports, net } = plan;
  return {
    tier: 2,
    spec: {
      name: 'router',
      service: 'router',
      configFile: configFile(plan, 'router'),
      listen: [
        listenAt(plan, ports.routerSsh, 'router SSH'),
        listenAt(plan, ports.routerHttp, 'router HTTP'),
        listenAt(plan, ports.routerMetrics, 'router metrics'),
      ],
    },
    config: routerConfig(paths, {
      routing: 'learn',
      sshListen: bindAt(plan, ports.routerSsh),
      httpListen: bindAt(plan, ports.routerHttp),
      metricsListen: bindAt(plan, ports.routerMetrics),
      region: routerRegion(plan.world),
      cells: routerCells(plan.world, (c) =>
        plan.edge ? shellEndpoint(ports, c) : `http://${net.host('bridge', c)}:${ports.bridge(c.id)}`,
      ),
      logLevel: plan.logLevel,
      tunnelProfile: plan.world.routers.tunnelProfile,
      shellJwtTtlSeconds: plan.world.routers.shellJwtTtlSeconds,
    }),
  };
}

/** The addresses of the world's main router (stack.json `router`): the learn router, else the topology router. */
export function mainRouter(world: World, ports: StackPorts) {
  const learn = world.routers.learn;
  return {
    ssh: `${HOST}:${learn ? ports.routerSsh : ports.routerTopologySsh}`,
    http: `http://${HOST}:${learn ? ports.routerHttp : ports.routerTopologyHttp}`,
    metrics: `http://${HOST}:${learn ? ports.routerMetrics : ports.routerTopologyMetrics}/metrics`,
  };
}

/**
 * `<data>/stack.json` (the `StackJson` contract of `lib/contracts/stack.ts`) but for `pids`, which
 * the supervisor adds once every service is up.
 */
export function stackJson(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  topology: Topology,
  repositories: Record<string, string>,
  edge: StackEdge = { kind: 'none', cells: [] },
): Omit<StackJson, 'pids' | 'control' | 'journal'> {
  const cellOf = (namespace: string) => {
    const org = topology.namespaces.find((n) => n.path === namespace)?.organization;
    return required(topology.organizations.find((o) => o.path === org)?.cell, `the cell of ${namespace}`);
  };
  const router = mainRouter(world, ports);
  return {
    version: 1,
    topologyFile: world.file,
    router: {
      ssh: router.ssh,
      http: router.http,
      tunnelProfile: world.routers.tunnelProfile,
      shellJwtTtlSeconds: world.routers.shellJwtTtlSeconds,
    },
    cells: world.cells.map((c) => ({
      id: c.id,
      name: c.name,
      legacy: c.legacy,
      bridge: `http://${HOST}:${ports.bridge(c.id)}`,
      rails: `http://${HOST}:${ports.rails(c.id)}`,
      gitaly: `${HOST}:${ports.gitaly(c.id)}`,
      storage: paths.storage(c.name),
      metrics: `http://${HOST}:${ports.bridgeMetrics(c.id)}/metrics`,
      shellEndpoint: shellEndpoint(ports, c),
    })),
    users: world.users.map((u) => ({
      username: u.username,
      id: u.id,
      ...(u.publicKey === undefined ? { privateKey: paths.userKey(u.username) } : {}),
      publicKey: `${paths.userKey(u.username)}.pub`,
    })),
    projects: topology.projects.map((p) => {
      const path = `${p.namespace}/${p.path}`;
      return {
        path,
        cell: cellOf(p.namespace),
        visibility: p.visibility,
        repository: required(repositories[path], `the repository of ${path}`),
      };
    }),
    secrets: { shell: paths.shellSecret, workhorse: paths.workhorseSecret, gitaly: paths.gitalyToken },
    routerMetrics: router.metrics,
    knownHosts: `${paths.root}/known_hosts`,
    edge,
    ...topologyStackJson(ports, world.routers),
    geo: topology.geoSites ? geoStackJson(world, paths, ports) : [],
  };
}

/** A checked world always has it; a stack.json with a hole in it would only fail later, elsewhere. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`stack.json: no ${what} in the world`);
  return value;
}
