import type { Topology } from '../mock-cell/topology-types.js';
import { DEMO_CELLS, HOST, type StackNet, type StackPaths, type StackPorts } from './layout.js';
import type { ServiceSpec } from './supervisor.js';

/** One service's config file content and how the supervisor starts it. */
export interface PlannedService {
  spec: ServiceSpec;
  config: Record<string, unknown>;
  tier: number;
}

/** The processes of the demo stack and their config files (see docs/contracts.md). */
export function planServices(
  paths: StackPaths,
  ports: StackPorts,
  net: StackNet,
  logLevel: string,
): PlannedService[] {
  const file = (name: string) => `${paths.configDir}/${name}.json`;
  const at = (port: number, what: string) => ({ address: `${net.bind}:${port}`, what });
  const services: PlannedService[] = [];
  for (const cell of DEMO_CELLS) {
    const name = `gitaly-${cell.name}`;
    services.push({
      tier: 0,
      spec: {
        name,
        service: 'mock-gitaly',
        configFile: file(name),
        listen: [at(ports.gitaly(cell.id), `mock Gitaly of ${cell.name}`)],
      },
      config: {
        listen: `${net.bind}:${ports.gitaly(cell.id)}`,
        storages: { default: paths.storage(cell.name) },
        tokenFile: paths.gitalyToken,
        gitlabUrl: `http://${net.host('rails', cell)}:${ports.rails(cell.id)}`,
        gitlabSecretFile: paths.shellSecret,
        runtimeDir: paths.gitalyRuntime(cell.name),
        logLevel,
      },
    });
  }
  services.push({
    tier: 0,
    spec: {
      name: 'mock-cell',
      service: 'mock-cell',
      configFile: file('mock-cell'),
      listen: DEMO_CELLS.map((c) => at(ports.rails(c.id), `mock cell (Rails) of ${c.name}`)),
    },
    config: {
      topologyFile: paths.topology,
      listen: DEMO_CELLS.map((c) => ({ cell: c.name, address: `${net.bind}:${ports.rails(c.id)}` })),
      shellSecretFile: paths.shellSecret,
      workhorseSecretFile: paths.workhorseSecret,
      gitalyTokenFile: paths.gitalyToken,
      logLevel,
    },
  });
  for (const cell of DEMO_CELLS) {
    const name = `bridge-${cell.name}`;
    services.push({
      tier: 1,
      spec: {
        name,
        service: 'bridge',
        configFile: file(name),
        listen: [
          at(ports.bridge(cell.id), `bridge of ${cell.name}`),
          at(ports.bridgeMetrics(cell.id), `bridge metrics of ${cell.name}`),
        ],
      },
      config: {
        listen: `${net.bind}:${ports.bridge(cell.id)}`,
        railsUrl: `http://${net.host('rails', cell)}:${ports.rails(cell.id)}`,
        shellSecretFile: paths.shellSecret,
        workhorseSecretFile: paths.workhorseSecret,
        metricsListen: `${net.bind}:${ports.bridgeMetrics(cell.id)}`,
        logLevel,
      },
    });
  }
  services.push({
    tier: 2,
    spec: {
      name: 'router',
      service: 'router',
      configFile: file('router'),
      listen: [
        at(ports.routerSsh, 'router SSH'),
        at(ports.routerHttp, 'router HTTP'),
        at(ports.routerMetrics, 'router metrics'),
      ],
    },
    config: {
      sshListen: `${net.bind}:${ports.routerSsh}`,
      httpListen: `${net.bind}:${ports.routerHttp}`,
      metricsListen: `${net.bind}:${ports.routerMetrics}`,
      hostKeyFile: paths.hostKey,
      shellSecretFile: paths.shellSecret,
      region: 'us',
      cells: DEMO_CELLS.map((c) => ({
        id: c.id,
        name: c.name,
        legacy: c.legacy,
        region: c.region,
        url: `http://${net.host('bridge', c)}:${ports.bridge(c.id)}`,
      })),
      logLevel,
    },
  });
  return services;
}

/** The `stack.json` contract of architecture.md. */
export function stackJson(
  paths: StackPaths,
  ports: StackPorts,
  topology: Topology,
  repositories: Record<string, string>,
): Record<string, unknown> {
  const cellOf = (namespace: string) => {
    const org = topology.namespaces.find((n) => n.path === namespace)?.organization;
    return topology.organizations.find((o) => o.path === org)?.cell;
  };
  return {
    router: { ssh: `${HOST}:${ports.routerSsh}`, http: `http://${HOST}:${ports.routerHttp}` },
    cells: DEMO_CELLS.map((c) => ({
      id: c.id,
      name: c.name,
      legacy: c.legacy,
      bridge: `http://${HOST}:${ports.bridge(c.id)}`,
      rails: `http://${HOST}:${ports.rails(c.id)}`,
      gitaly: `${HOST}:${ports.gitaly(c.id)}`,
      storage: paths.storage(c.name),
      metrics: `http://${HOST}:${ports.bridgeMetrics(c.id)}/metrics`,
    })),
    users: topology.users.map((u) => ({
      username: u.username,
      id: u.id,
      privateKey: paths.userKey(u.username),
      publicKey: `${paths.userKey(u.username)}.pub`,
    })),
    projects: topology.projects.map((p) => ({
      path: `${p.namespace}/${p.path}`,
      cell: cellOf(p.namespace),
      visibility: p.visibility,
      repository: repositories[`${p.namespace}/${p.path}`],
    })),
    secrets: { shell: paths.shellSecret, workhorse: paths.workhorseSecret, gitaly: paths.gitalyToken },
    routerMetrics: `http://${HOST}:${ports.routerMetrics}/metrics`,
    knownHosts: `${paths.root}/known_hosts`,
  };
}
