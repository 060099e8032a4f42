/**
 * @file The edge of a world (`edge/`): with an edge, every cell's shell endpoint
 * (127.0.0.<id + 1>:<shell port>) is the edge's front for that cell, the bridge behind it on its own
 * port; both routers (learn and topology mode) dial the shell endpoints. Without one (`none`), today's
 * wiring: the bridge listens on its shell endpoint itself and the learn router dials the bridge.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EdgeSpec } from '../edge/figures.js';
import { haproxyEdgeConfig } from '../edge/haproxy-config.js';
import { nginxEdgeConfig } from '../edge/nginx-config.js';
import { makeNginxTempDirs } from '../edge/nginx-files.js';
import type { EdgeRoute } from '../edge/routes.js';
import type { StackEdge } from '../lib/contracts/stack.js';
import { HOST, type StackPaths, type StackPorts } from './layout.js';
import type { PlannedService } from './stack-config.js';
import type { World } from './topology-file-resolve.js';
import { bridgeShellListen, shellEndpoint } from './topology-plan.js';

export type RunningEdge = Exclude<EdgeSpec, { kind: 'none' }>;

/** The edge's folder under the data folder. */
export const edgeDir = (paths: StackPaths) => join(paths.root, 'edge');

function configFileOf(paths: StackPaths, edge: RunningEdge): string {
  return join(edgeDir(paths), edge.figures.proxy === 'nginx' ? 'nginx.conf' : 'haproxy.cfg');
}

/** One route per cell: its shell endpoint → its bridge. */
export function edgeRoutes(world: World, ports: StackPorts): EdgeRoute[] {
  return world.cells.map((c) => ({
    cell: c.name,
    listen: bridgeShellListen(ports, c),
    upstream: `${HOST}:${ports.bridge(c.id)}`,
  }));
}

/** Writes the proxy's config (and nginx's temp folders) under `<data>/edge`. */
export async function writeEdgeFiles(world: World, paths: StackPaths, ports: StackPorts, edge: RunningEdge) {
  const dir = edgeDir(paths);
  await mkdir(dir, { recursive: true });
  const routes = edgeRoutes(world, ports);
  const { figures } = edge;
  if (figures.proxy === 'nginx') await makeNginxTempDirs(dir);
  const text =
    figures.proxy === 'nginx'
      ? nginxEdgeConfig({ dir, figures, routes })
      : haproxyEdgeConfig({ figures, routes });
  await writeFile(configFileOf(paths, edge), text);
}

/** The edge service (tier 1, beside the bridges). */
export function planEdge(
  world: World,
  paths: StackPaths,
  ports: StackPorts,
  edge: RunningEdge,
  logLevel: string,
): PlannedService {
  const listen = edgeRoutes(world, ports).map((r) => r.listen);
  return {
    tier: 1,
    spec: {
      name: 'edge',
      service: 'edge',
      configFile: `${paths.configDir}/edge.json`,
      listen: listen.map((address) => ({ address, what: `edge (${edge.figures.proxy}) in front of a cell` })),
      controls: [],
    },
    config: {
      proxy: edge.figures.proxy,
      configFile: configFileOf(paths, edge),
      dir: edgeDir(paths),
      listen,
      logLevel,
    },
  };
}

/** The proxy's pid as the edge service wrote it (`<data>/edge/proxy.pid`) once the proxy listened. */
function proxyPid(paths: StackPaths): number | undefined {
  try {
    const pid = Number(readFileSync(join(edgeDir(paths), 'proxy.pid'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** stack.json `edge` (the proxy's pid as it is now: call again after the edge restarted). */
export function edgeStackJson(world: World, paths: StackPaths, ports: StackPorts, edge: EdgeSpec): StackEdge {
  if (edge.kind === 'none') return { kind: 'none', cells: [] };
  const { proxy, ...figures } = edge.figures;
  const pid = proxyPid(paths);
  return {
    kind: edge.kind,
    ...(edge.file === undefined ? {} : { file: edge.file }),
    proxy,
    configFile: configFileOf(paths, edge),
    ...(pid === undefined ? {} : { pid }),
    figures,
    cells: world.cells.map((c) => ({
      cell: c.name,
      dial: shellEndpoint(ports, c),
      bridge: `http://${HOST}:${ports.bridge(c.id)}`,
    })),
  };
}
