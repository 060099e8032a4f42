import type { StackJson } from '../lib/contracts/stack.js';
import { DEMO_CELLS, type DemoCell, HOST, routerCells, type StackPaths, type StackPorts } from './layout.js';
import type { PlannedService } from './stack-config.js';

/**
 * The Topology Service half of the local stack (`npm start`): the Topology Service, a second router in
 * `topology` mode, and the gitlab-shell layout: every cell's bridge also listens on one shared port
 * (`ports.shell`) on its own loopback address, because gitlab-shell keeps only the host of a
 * `proxy.address` and adds its `cell_endpoint.port` (`../shared/docs/topology-service.md` §2.4).
 */

/** The loopback address of a cell's shell endpoint: 127.0.0.<id + 1> (cell 1 → 127.0.0.2). */
export function shellHost(cell: Pick<DemoCell, 'id'>): string {
  return `127.0.0.${cell.id + 1}`;
}

export function shellEndpoint(ports: StackPorts, cell: Pick<DemoCell, 'id'>): string {
  return `http://${shellHost(cell)}:${ports.shell}`;
}

export function topologyServiceAddresses(ports: StackPorts): { grpc: string; http: string } {
  return { grpc: `${HOST}:${ports.topologyGrpc}`, http: `http://${HOST}:${ports.topologyHttp}` };
}

export function planTopologyService(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService {
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
    },
    config: {
      grpcListen: `${HOST}:${ports.topologyGrpc}`,
      httpListen: `${HOST}:${ports.topologyHttp}`,
      // `address` is what `proxy.address` answers: the host of the cell's shell endpoint.
      cells: DEMO_CELLS.map((c) => ({
        id: c.id,
        name: c.name,
        address: shellHost(c),
        sessionPrefix: `cell-${c.id}`,
      })),
      logLevel,
    },
  };
}

/** The second router: `routing: "topology"`, its cells at their shell endpoints. */
export function planRouterTopology(paths: StackPaths, ports: StackPorts, logLevel: string): PlannedService {
  const name = 'router-topology';
  const ts = topologyServiceAddresses(ports);
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
    config: {
      sshListen: `${HOST}:${ports.routerTopologySsh}`,
      httpListen: `${HOST}:${ports.routerTopologyHttp}`,
      metricsListen: `${HOST}:${ports.routerTopologyMetrics}`,
      hostKeyFiles: paths.hostKeys,
      shellSecretFile: paths.shellSecret,
      region: 'us',
      cells: routerCells((c) => shellEndpoint(ports, c)),
      routing: 'topology',
      topologyServiceAddress: ts.grpc,
      topologyServiceUrl: ts.http,
      cellEndpointScheme: 'http',
      cellEndpointPort: ports.shell,
      logLevel,
    },
  };
}

/** The bridge's `shellListen` of a cell. */
export function bridgeShellListen(ports: StackPorts, cell: DemoCell): string {
  return `${shellHost(cell)}:${ports.shell}`;
}

/** What stack.json adds for this half (`lib/contracts/stack.ts`). */
export function topologyStackJson(
  ports: StackPorts,
): Pick<StackJson, 'topologyService' | 'routerTopology' | 'routerTopologyMetrics'> {
  return {
    topologyService: topologyServiceAddresses(ports),
    routerTopology: {
      ssh: `${HOST}:${ports.routerTopologySsh}`,
      http: `http://${HOST}:${ports.routerTopologyHttp}`,
    },
    routerTopologyMetrics: `http://${HOST}:${ports.routerTopologyMetrics}/metrics`,
  };
}

/**
 * `<data>/gitlab-shell-config.yml`: gitlab-shell's `config.yml` in Cells mode for this stack (keys of
 * §2.1): `gitlab_url` the legacy cell's bridge (TCP, not a socket), the Topology Service, the
 * `cell_endpoint` every cell's bridge shares, the shell secret file.
 */
export function gitlabShellConfigYml(paths: StackPaths, ports: StackPorts): string {
  const legacy = DEMO_CELLS.find((c) => c.legacy) as DemoCell;
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
