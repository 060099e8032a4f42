import type { TopologyGeoSite } from '../mock-cell/topology-types.js';
import { geoCells, geoPaths, geoSites, planGeoServices } from './geo-plan.js';
import { COMPOSE_NET, composeServiceName, HOST, type StackPaths, stackPorts } from './layout.js';
import { routerConfig } from './router-plan.js';
import type { PlannedService } from './stack-config.js';
import type { World, WorldCell } from './topology-file-resolve.js';
import { routerCells, routerRegion } from './topology-plan.js';

/**
 * The compose world's two halves that the local stack plans on 127.0.0.1 only (`topology-plan.ts`,
 * `geo-plan.ts`): the topology-mode router and the Geo secondaries, each service in a container of
 * its own, binding 0.0.0.0 and reaching the others by their compose service names.
 */

/** A planned service and the compose service (container) that runs it. */
export interface ComposeService extends PlannedService {
  container: string;
}

export const ROUTER_TOPOLOGY = 'router-topology';

/** The compose service name of the Topology Service. */
export const TOPOLOGY_SERVICE = 'topology-service';

/** Compose names of a cell's Geo secondary: `cell-us0-geo`, `gitaly-us0-geo`, `bridge-us0-geo`, `router-us0-geo`. */
export function geoServiceName(kind: 'router' | 'bridge' | 'rails' | 'gitaly', cell: WorldCell): string {
  const short = cell.name.replace(/^cell_/, '');
  return kind === 'router' ? `router-${short}-geo` : `${composeServiceName(kind, cell)}-geo`;
}

/** The folder a Geo secondary's repositories volume is mounted at (its storage and Gitaly runtime). */
export function geoVolumeMount(paths: StackPaths, cell: WorldCell): string {
  const g = geoPaths(paths, cell);
  return g.storage.slice(0, g.storage.lastIndexOf('/'));
}

/**
 * The router in `routing: "topology"` mode (gitlab-shell's Cells mode): it asks the Topology Service
 * container, and reaches a cell at `http://<proxy.address host>:<cellEndpointPort>`, the address
 * being that cell's bridge container (`composeTopologyService`) and the port every bridge's
 * `shellListen`.
 */
export function composeRouterTopology(world: World, paths: StackPaths): ComposeService {
  const ports = stackPorts(0);
  const bind = (port: number) => `${COMPOSE_NET.bind}:${port}`;
  return {
    container: ROUTER_TOPOLOGY,
    tier: 2,
    spec: {
      name: ROUTER_TOPOLOGY,
      service: 'router',
      configFile: `${paths.configDir}/${ROUTER_TOPOLOGY}.json`,
      listen: [],
    },
    config: routerConfig(paths, {
      routing: 'topology',
      sshListen: bind(ports.routerTopologySsh),
      httpListen: bind(ports.routerTopologyHttp),
      metricsListen: bind(ports.routerTopologyMetrics),
      region: routerRegion(world),
      cells: routerCells(world, (c) => `http://${COMPOSE_NET.host('bridge', c)}:${ports.shell}`),
      topologyService: {
        grpc: `${TOPOLOGY_SERVICE}:${ports.topologyGrpc}`,
        http: `http://${TOPOLOGY_SERVICE}:${ports.topologyHttp}`,
        cellEndpointPort: ports.shell,
      },
      logLevel: 'info',
      tunnelProfile: world.routers.tunnelProfile,
      shellJwtTtlSeconds: world.routers.shellJwtTtlSeconds,
    }),
  };
}

/** Which compose service answers on each port of `127.0.0.1` in the local plan (the default ports). */
function hostsByPort(world: World): Map<number, string> {
  const ports = stackPorts(0);
  const hosts = new Map<number, string>([[ports.routerSsh, COMPOSE_NET.host('router')]]);
  for (const cell of world.cells) {
    hosts.set(ports.rails(cell.id), COMPOSE_NET.host('rails', cell));
    hosts.set(ports.bridge(cell.id), COMPOSE_NET.host('bridge', cell));
    hosts.set(ports.gitaly(cell.id), COMPOSE_NET.host('gitaly', cell));
  }
  for (const cell of geoCells(world)) {
    const geo = ports.geo(cell.id);
    hosts.set(geo.ssh, geoServiceName('router', cell));
    hosts.set(geo.http, geoServiceName('router', cell));
    hosts.set(geo.rails, geoServiceName('rails', cell));
    hosts.set(geo.bridge, geoServiceName('bridge', cell));
    hosts.set(geo.gitaly, geoServiceName('gitaly', cell));
  }
  return hosts;
}

const LISTEN_KEYS = new Set(['listen', 'sshListen', 'httpListen', 'metricsListen']);

/**
 * A local plan's value moved into the compose network: `127.0.0.1:<port>` becomes `0.0.0.0:<port>`
 * where the service binds it (its listen settings) and `<compose service>:<port>` where it reaches it.
 */
export function relocate<T>(value: T, hosts: Map<number, string>, listening = false): T {
  if (typeof value === 'string') {
    return value.replace(/127\.0\.0\.1:(\d+)/g, (whole, port: string) => {
      if (listening) return `${COMPOSE_NET.bind}:${port}`;
      const host = hosts.get(Number(port));
      if (!host) throw new Error(`compose: no service answers on port ${port} (${whole})`);
      return `${host}:${port}`;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => relocate(v, hosts, listening)) as T;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => {
      const inListen = listening || LISTEN_KEYS.has(k);
      return [k, relocate(v, hosts, inListen)];
    });
    return Object.fromEntries(entries) as T;
  }
  return value;
}

const GEO_KINDS = ['gitaly', 'rails', 'bridge', 'router'] as const;

/**
 * Per cell of the file's `geo`, its secondary site (`geo-plan.ts`: Gitaly with the replicas, Rails
 * with `geoSite`, bridge, `site` router) as four containers.
 */
export function composeGeoServices(world: World, paths: StackPaths): ComposeService[] {
  const hosts = hostsByPort(world);
  const planned = planGeoServices(world, paths, stackPorts(0), 'info');
  return geoCells(world).flatMap((cell, i) =>
    GEO_KINDS.map((kind, k) => {
      const p = planned[i * GEO_KINDS.length + k] as PlannedService;
      return { ...p, container: geoServiceName(kind, cell), config: relocate(p.config, hosts) };
    }),
  );
}

/** The topology's `geoSites` as the containers reach each other (the primary's SSH: the `learn` router). */
export function composeGeoSites(world: World, paths: StackPaths): TopologyGeoSite[] {
  const ports = stackPorts(0);
  return relocate(geoSites(world, paths, ports, `${HOST}:${ports.routerSsh}`), hostsByPort(world));
}
