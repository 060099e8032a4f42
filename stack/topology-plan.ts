import type { StackJson } from '../lib/contracts/stack.js';
import { HOST, type StackCell, type StackPaths, type StackPorts } from './layout.js';
import { type RouterCell, routerConfig } from './router-plan.js';
import type { PlannedService } from './stack-config.js';
import type { World, WorldCell } from './topology-file-resolve.js';

/**
 * The Topology Service half of the local stack: the Topology Service, the router in `topology`
 * mode (when the world starts it), and the gitlab-shell layout: every cell's bridge also listens on
 * one shared port (`ports.shell`) on its own loopback address, because gitlab-shell keeps only the
 * host of a `proxy.address` and adds its `cell_endpoint.port` (`../shared/docs/topology-service.md` §2.4).
 */

/** The loopback address of a cell's shell endpoint: 127.0.0.<id + 1> (cell 1 → 127.0.0.2). */
export function shellHost(cell: Pick<StackCell, 'id'>): string {
  return `127.0.0.${cell.id + 1}`;
}

export function shellEndpoint(ports: StackPorts, cell: Pick<StackCell, 'id'>): string {
  return `http://${shellHost(cell)}:${ports.shell}`;
}

export function topologyServiceAddresses(ports: StackPorts): { grpc: string; http: string } {
  return { grpc: `${HOST}:${ports.topologyGrpc}`, http: `http://${HOST}:${ports.topologyHttp}` };
}

/** The world's cells as a router's `cells` setting, each reached at `url(cell)`. */
export function routerCells(world: World, url: (cell: WorldCell) => string): RouterCell[] {
  return world.cells.map((c) => ({
    id: c.id,
    name: c.name,
    legacy: c.legacy,
    region: c.region,
    url: url(c),
  }));
}

/** The region of the world's routers: the legacy cell's. */
export function routerRegion(world: World): string {
  return world.cells.find((c) => c.legacy)?.region ?? 'us';
}

export function planTopologyService(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  logLevel: string,
): PlannedService {
  const name = 'topology-service';
  return {
    tier: 0,
    spec: {
      name,
      service: 'topology-service',
      configFile: `${paths.configDir}/${name}.json`,
      listen: [
        { address: `${HOST}:${ports.topologyGrpc}`, what: 'Topology Service gRPC' },
        { address: `${HOST}:${ports.topologyHttp}`, what: 'Topology Service REST' },
      ],
      controls: [{ target: 'topology-service' }],
    },
    config: {
      grpcListen: `${HOST}:${ports.topologyGrpc}`,
      httpListen: `${HOST}:${ports.topologyHttp}`,
      // `address` is what `proxy.address` answers: the host of the cell's shell endpoint.
      cells: world.cells.map((c) => ({
        id: c.id,
        name: c.name,
        address: shellHost(c),
        sessionPrefix: c.sessionPrefix,
      })),
      logLevel,
    },
  };
}

/** The router in `routing: "topology"` mode, its cells at their shell endpoints. */
export function planRouterTopology(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  logLevel: string,
): PlannedService {
  const name = 'router-topology';
  return {
    tier: 2,
    spec: {
      name,
      service: 'router',
      configFile: `${paths.configDir}/${name}.json`,
      listen: [
        { address: `${HOST}:${ports.routerTopologySsh}`, what: 'topology router SSH' },
        { address: `${HOST}:${ports.routerTopologyHttp}`, what: 'topology router HTTP' },
        { address: `${HOST}:${ports.routerTopologyMetrics}`, what: 'topology router metrics' },
      ],
    },
    config: routerConfig(paths, {
      routing: 'topology',
      sshListen: `${HOST}:${ports.routerTopologySsh}`,
      httpListen: `${HOST}:${ports.routerTopologyHttp}`,
      metricsListen: `${HOST}:${ports.routerTopologyMetrics}`,
      region: routerRegion(world),
      cells: routerCells(world, (c) => shellEndpoint(ports, c)),
      topologyService: { ...topologyServiceAddresses(ports), cellEndpointPort: ports.shell },
      logLevel,
      tunnelProfile: world.routers.tunnelProfile,
      shellJwtTtlSeconds: world.routers.shellJwtTtlSeconds,
    }),
  };
}

/** The bridge's `shellListen` of a cell. */
export function bridgeShellListen(ports: StackPorts, cell: Pick<StackCell, 'id'>): string {
  return `${shellHost(cell)}:${ports.shell}`;
}

/** What stack.json adds for this half (`lib/contracts/stack.ts`); the router only when started. */
export function topologyStackJson(
  ports: StackPorts,
  routers: Pick<World['routers'], 'topology' | 'tunnelProfile' | 'shellJwtTtlSeconds'>,
): Pick<StackJson, 'topologyService' | 'routerTopology' | 'routerTopologyMetrics'> {
  return {
    topologyService: topologyServiceAddresses(ports),
    ...(routers.topology
      ? {
          routerTopology: {
            ssh: `${HOST}:${ports.routerTopologySsh}`,
            http: `http://${HOST}:${ports.routerTopologyHttp}`,
            tunnelProfile: routers.tunnelProfile,
            shellJwtTtlSeconds: routers.shellJwtTtlSeconds,
          },
          routerTopologyMetrics: `http://${HOST}:${ports.routerTopologyMetrics}/metrics`,
        }
      : {}),
  };
}

/**
 * `<data>/gitlab-shell-config.yml`: gitlab-shell's `config.yml` in Cells mode for this stack (keys of
 * §2.1): `gitlab_url` the legacy cell's bridge (TCP, not a socket), the Topology Service, the
 * `cell_endpoint` every cell's bridge shares, the shell secret file.
 */
export function gitlabShellConfigYml(world: World, paths: StackPaths, ports: StackPorts): string {
  const legacy = world.cells.find((c) => c.legacy) ?? { id: 1 };
  return [
    '# gitlab-shell in Cells mode against this stack (written by npm start).',
    '# Every cell is reached at http://<proxy.address host>:<cell_endpoint.port>; see README.md.',
    `gitlab_url: "${shellEndpoint(ports, legacy)}"`,
    `secret_file: "${paths.shellSecret}"`,
    'topology_service:',
    '  enabled: true',
    `  address: "${HOST}:${ports.topologyGrpc}"`,
    '  timeout: 5s',
    '  tls:',
    '    enabled: false',
    '  cell_endpoint:',
    '    scheme: http',
    `    port: ${ports.shell}`,
    '',
  ].join('\n');
}
