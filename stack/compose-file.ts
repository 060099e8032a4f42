import { dirname, resolve } from 'node:path';
import { composeServices } from './compose-init.js';
import {
  type ComposeService,
  geoServiceName,
  geoVolumeMount,
  ROUTER_TOPOLOGY,
  TOPOLOGY_SERVICE,
} from './compose-plan.js';
import { geoCells } from './geo-plan.js';
import { COMPOSE_NET, type StackPaths, stackPaths, stackPorts } from './layout.js';
import { nodeFlagsFor } from './node-flags.js';
import { loadTopologyFile } from './topology-file-load.js';
import type { World, WorldCell } from './topology-file-resolve.js';

/**
 * A compose file for any world (`node dist/stack/compose-file.js --topology F > my-compose.yaml`): the
 * services `composeServices` plans for it, wired as compose.yaml wires the demo's (volumes, depends_on,
 * healthchecks, ports on 127.0.0.1), plus `init` reading the file (bind-mounted). No `client` (its
 * scenario is the demo's) and no `gitlab` profile. Printed as JSON, which is YAML;
 * test/unit/compose.test.ts checks that the demo's equals compose.yaml.
 */

type Service = Record<string, unknown>;
const healthy = { condition: 'service_healthy' };
const AFTER_INIT = { init: { condition: 'service_completed_successfully' } };
const READ_ONLY = ['stack-data:/data:ro', 'secrets:/data/secrets:ro'];

const shortName = (cell: WorldCell) => cell.name.replace(/^cell_/, '');
const cellVolume = (cell: WorldCell) => `repositories-${shortName(cell)}`;
const geoVolume = (cell: WorldCell) => `${cellVolume(cell)}-geo`;

function portOf(address: unknown): string {
  return String(address).split(':').pop() as string;
}

function boundPorts(config: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of ['listen', 'grpcListen', 'httpListen', 'sshListen', 'metricsListen', 'shellListen']) {
    const v = config[key];
    if (Array.isArray(v)) out.push(...v.map((l: { address: string }) => portOf(l.address)));
    else if (v !== undefined) out.push(portOf(v));
  }
  return out;
}

/** Which ports each SSH entry publishes on the host's loopback. */
function publishedPorts(world: World): Map<string, number[]> {
  const ports = stackPorts(0);
  return new Map([
    [COMPOSE_NET.host('router'), [ports.routerSsh, ports.routerHttp]],
    [ROUTER_TOPOLOGY, [ports.routerTopologySsh, ports.routerTopologyHttp]],
    ...geoCells(world).map((c): [string, number[]] => [geoServiceName('router', c), [ports.geo(c.id).ssh]]),
  ]);
}

/** What a container waits for, and which repositories volume it mounts. */
function wiring(world: World, paths: StackPaths, s: ComposeService) {
  const names = (kind: 'bridge', cells = world.cells) => cells.map((c) => COMPOSE_NET.host(kind, c));
  const all = (list: string[]) => Object.fromEntries(list.map((n) => [n, healthy]));
  for (const cell of world.cells) {
    const local = `${cellVolume(cell)}:${dirname(paths.storage(cell.name))}`;
    if (s.container === COMPOSE_NET.host('gitaly', cell)) return { volumes: [local] };
    if (s.container === COMPOSE_NET.host('rails', cell))
      return { volumes: [local], after: all([TOPOLOGY_SERVICE]) };
    if (s.container === COMPOSE_NET.host('bridge', cell))
      return { after: all([COMPOSE_NET.host('rails', cell), COMPOSE_NET.host('gitaly', cell)]) };
  }
  for (const cell of geoCells(world)) {
    const geo = `${geoVolume(cell)}:${geoVolumeMount(paths, cell)}`;
    if (s.container === geoServiceName('gitaly', cell) || s.container === geoServiceName('rails', cell))
      return { volumes: [geo] };
    if (s.container === geoServiceName('bridge', cell))
      return { after: all([geoServiceName('rails', cell), geoServiceName('gitaly', cell)]) };
    if (s.container === geoServiceName('router', cell))
      return { after: all([geoServiceName('bridge', cell), COMPOSE_NET.host('bridge', cell)]) };
  }
  if (s.container === ROUTER_TOPOLOGY) return { after: all([TOPOLOGY_SERVICE, ...names('bridge')]) };
  if (s.container === COMPOSE_NET.host('router')) return { after: all(names('bridge')) };
  return {};
}

function service(world: World, paths: StackPaths, s: ComposeService): Service {
  const { volumes = [], after = {} } = wiring(world, paths, s);
  const published = publishedPorts(world).get(s.container) ?? [];
  const bound = boundPorts(s.config).filter((p) => !published.includes(Number(p)));
  const main = `dist/${s.spec.service}/main.js`;
  return {
    image: 'gitlab-cells-ssh:dev',
    restart: 'unless-stopped',
    networks: ['cells'],
    healthcheck: HEALTHCHECK,
    command: ['node', ...nodeFlagsFor(s.spec.service), main, '--config', s.spec.configFile],
    ...(published.length > 0 ? { ports: published.map((p) => `127.0.0.1:${p}:${p}`) } : {}),
    expose: bound,
    volumes: [...READ_ONLY, ...volumes],
    depends_on: { ...AFTER_INIT, ...after },
  };
}

const HEALTHCHECK = {
  test: ['CMD', 'node', 'dist/stack/compose-health.js'],
  interval: '5s',
  timeout: '10s',
  retries: 10,
  start_period: '20s',
};

/** The compose file of `world`, whose topology file is `topologyFile` on the host. */
export function composeFileFor(world: World, topologyFile: string): Record<string, unknown> {
  const paths = stackPaths('/data');
  const planned = composeServices(world, paths, COMPOSE_NET);
  const repoVolumes = [
    ...world.cells.map((c) => `${cellVolume(c)}:${dirname(paths.storage(c.name))}`),
    ...geoCells(world).map((c) => `${geoVolume(c)}:${geoVolumeMount(paths, c)}`),
  ];
  const services: Record<string, Service> = {
    init: {
      image: 'gitlab-cells-ssh:dev',
      user: 'root',
      command: ['sh', '-c', 'node dist/stack/compose-init.js && chown -R node:node /data'],
      environment: { STACK_DATA_DIR: '/data', STACK_TOPOLOGY: '/world/topology.json' },
      networks: ['cells'],
      restart: 'no',
      healthcheck: { disable: true },
      volumes: [
        'stack-data:/data',
        'secrets:/data/secrets',
        ...repoVolumes,
        `${topologyFile}:/world/topology.json:ro`,
      ],
    },
  };
  for (const s of planned) services[s.container] = service(world, paths, s);
  const volumes = Object.fromEntries(
    ['stack-data', 'secrets', ...repoVolumes.map((v) => v.split(':')[0] as string)].map((v) => [v, {}]),
  );
  return { name: 'gitlab-cells-ssh', services, networks: { cells: {} }, volumes };
}

if (process.argv[1]?.endsWith('compose-file.js')) {
  const at = process.argv.indexOf('--topology');
  const file = at > 0 ? process.argv[at + 1] : undefined;
  if (!file) {
    process.stderr.write('usage: node dist/stack/compose-file.js --topology <file> > my-compose.yaml\n');
    process.exit(64);
  }
  try {
    const compose = composeFileFor(loadTopologyFile(file), resolve(file));
    process.stdout.write(`# generated by node dist/stack/compose-file.js --topology ${file}\n`);
    process.stdout.write(`${JSON.stringify(compose, null, 2)}\n`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(78);
  }
}
