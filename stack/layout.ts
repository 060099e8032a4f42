import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { demoWorld } from './topology-file-load.js';

/** A cell as the layout needs it: its id (ports, shell address) and name (folders, compose names). */
export interface StackCell {
  id: number;
  name: string;
}

export const HOST = '127.0.0.1';

/**
 * Where services bind and how they reach each other. Locally everything is on 127.0.0.1; under
 * compose each service binds 0.0.0.0 and is reached by its service name.
 */
export interface StackNet {
  bind: string;
  host(service: 'router' | 'bridge' | 'rails' | 'gitaly', cell?: StackCell): string;
}

export const LOCAL_NET: StackNet = { bind: HOST, host: () => HOST };

/** Compose service names: router, bridge-us0, cell-us0, gitaly-us0, … */
export function composeServiceName(
  service: 'router' | 'bridge' | 'rails' | 'gitaly',
  cell?: StackCell,
): string {
  if (service === 'router' || !cell) return 'router';
  const short = cell.name.replace(/^cell_/, '');
  return `${service === 'rails' ? 'cell' : service}-${short}`;
}

export const COMPOSE_NET: StackNet = { bind: '0.0.0.0', host: composeServiceName };

/** The ports of a cell's Geo secondary site (`geo-plan.ts`): SSH entry, router HTTP, Rails, bridge, Gitaly. */
export interface GeoPorts {
  ssh: number;
  http: number;
  rails: number;
  bridge: number;
  gitaly: number;
}

/** Every port of a stack: fixed ones, and per cell id those of its services and of its Geo site. */
export interface StackPorts {
  routerSsh: number;
  routerHttp: number;
  routerMetrics: number;
  rails(cellId: number): number;
  bridge(cellId: number): number;
  bridgeMetrics(cellId: number): number;
  gitaly(cellId: number): number;
  /** The gitlab-shell layout: every cell's bridge on this port of its own 127.0.0.x. */
  shell: number;
  topologyGrpc: number;
  topologyHttp: number;
  routerTopologySsh: number;
  routerTopologyHttp: number;
  routerTopologyMetrics: number;
  /** The Geo secondary site of the cell `cellId` (`geo-plan.ts`). */
  geo(cellId: number): GeoPorts;
}

/**
 * Today's default ports, each plus `offset` (STACK_PORT_OFFSET, `--port-offset`): per cell id
 * Rails 3000+id, bridge 4000+id, metrics 4100+id, Gitaly 9000+id; the Geo site of cell id k
 * 2223+k (SSH), 8083+k, 3010+k, 4010+k, 9010+k (the demo's cell_us0: 2224, 8084, 3011, 4011, 9011).
 */
export function stackPorts(offset: number): StackPorts {
  return {
    routerSsh: 2222 + offset,
    routerHttp: 8080 + offset,
    routerMetrics: 8081 + offset,
    rails: (cellId) => 3000 + cellId + offset,
    bridge: (cellId) => 4000 + cellId + offset,
    bridgeMetrics: (cellId) => 4100 + cellId + offset,
    gitaly: (cellId) => 9000 + cellId + offset,
    shell: 4443 + offset,
    topologyGrpc: 9095 + offset,
    topologyHttp: 9096 + offset,
    routerTopologySsh: 2223 + offset,
    routerTopologyHttp: 8082 + offset,
    routerTopologyMetrics: 8083 + offset,
    geo: (cellId) => ({
      ssh: 2223 + cellId + offset,
      http: 8083 + cellId + offset,
      rails: 3010 + cellId + offset,
      bridge: 4010 + cellId + offset,
      gitaly: 9010 + cellId + offset,
    }),
  };
}

/** Absolute paths inside the data folder (STACK_DATA_DIR, default ./var). */
export function stackPaths(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    stackJson: join(root, 'stack.json'),
    topology: join(root, 'topology.json'),
    configDir: join(root, 'config'),
    logDir: join(root, 'logs'),
    keysDir: join(root, 'keys'),
    secretsDir: join(root, 'secrets'),
    shellSecret: join(root, 'secrets', 'gitlab_shell_secret'),
    workhorseSecret: join(root, 'secrets', 'gitlab_workhorse_secret'),
    gitalyToken: join(root, 'secrets', 'gitaly_token'),
    hostKey: join(root, 'router', 'ssh_host_ed25519_key'),
    /** The router's host keys (gitlab-sshd `host_key_files`): Ed25519 (`hostKey`), ECDSA P-256, RSA 3072. */
    hostKeys: ['ed25519', 'ecdsa', 'rsa'].map((t) => join(root, 'router', `ssh_host_${t}_key`)),
    storage: (cellName: string) => join(root, 'cells', cellName, 'repositories'),
    gitalyRuntime: (cellName: string) => join(root, 'cells', cellName, 'gitaly-runtime'),
    userKey: (username: string) => join(root, 'keys', username),
  };
}

export type StackPaths = ReturnType<typeof stackPaths>;

/** Every TCP port a stack on `ports` binds for cells `cellIds` with Geo sites for `geoCellIds`. */
export function portsOf(
  ports: StackPorts,
  cellIds: readonly number[],
  geoCellIds: readonly number[],
): number[] {
  const p = ports;
  return [
    p.routerSsh,
    p.routerHttp,
    p.routerMetrics,
    p.shell,
    p.topologyGrpc,
    p.topologyHttp,
    p.routerTopologySsh,
    p.routerTopologyHttp,
    p.routerTopologyMetrics,
    ...geoCellIds.flatMap((id) => Object.values(p.geo(id))),
    ...cellIds.flatMap((id) => [p.rails(id), p.bridge(id), p.bridgeMetrics(id), p.gitaly(id)]),
  ];
}

/** Every TCP port a stack of the demo world (`topologies/demo.json`) with this offset binds. */
export function allStackPorts(offset: number): number[] {
  const demo = demoWorld();
  const idOf = (name: string) => demo.cells.find((c) => c.name === name)?.id ?? 0;
  return portsOf(
    stackPorts(offset),
    demo.cells.map((c) => c.id),
    demo.geo.map(idOf),
  );
}

/**
 * Exit code of `npm start` (`dist/stack/main.js`) when one of its addresses is taken by another
 * process: EX_TEMPFAIL, "try again" — with another STACK_PORT_OFFSET or once the port is free.
 * The test and benchmark helpers retry a start with another offset on this code, and only on it.
 */
export const EXIT_ADDRESS_IN_USE = 75;

/** Whether `port` on 127.0.0.1 can be bound right now (a bind, not a connect). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/**
 * A STACK_PORT_OFFSET, `base` plus a multiple of `step` (below `slots` steps), whose ports are all
 * free right now, so a test or benchmark stack can run beside a developer's `npm start` and beside
 * each other.
 */
export async function findFreeOffset(base: number, slots: number, step = 100): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = base + step * Math.floor(Math.random() * slots);
    const free = await Promise.all(allStackPorts(offset).map(portFree));
    if (free.every(Boolean)) return offset;
  }
  throw new Error('no free port range for a stack');
}

/**
 * The smallest multiple of 100 such that two stacks whose offsets differ by any multiple of it never
 * share a port: no difference between two default ports (100 bridge metrics/bridge, 1000 bridge/Rails,
 * 1100, 4900, 5000, 6000 Gitaly/Rails) is a multiple of it.
 */
export function collisionFreeStep(): number {
  const ports = allStackPorts(0);
  const clashes = ports.flatMap((a) => ports.map((b) => a - b)).filter((d) => d > 0 && d % 100 === 0);
  let step = 100;
  while (clashes.some((d) => d % step === 0)) step += 100;
  return step;
}

/** The first port of the kernel's ephemeral range (outgoing connections take ports from there). */
export function ephemeralPortStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    if (Number.isInteger(first) && first > 0) return first;
  } catch {
    // not Linux
  }
  return 32_768;
}

/**
 * The offset for a test or benchmark stack: from 10 000 up in `collisionFreeStep()` steps, so such
 * stacks never pick each other's ports even while one of them is still binding, and with every
 * port below the ephemeral range, so an outgoing connection cannot hold one either.
 */
export function findSpareOffset(): Promise<number> {
  const base = 10_000;
  const step = collisionFreeStep();
  const highest = Math.max(...allStackPorts(0));
  const slots = Math.max(1, Math.floor((ephemeralPortStart() - 1 - highest - base) / step) + 1);
  return findFreeOffset(base, slots, step);
}

/**
 * The nearest STACK_PORT_OFFSET above `offset` (in steps of 100, then from 0 up once past the
 * 50 000 limit) whose ports are all free right now; undefined when none of the first `tries` is.
 * Used to suggest an offset when a start finds one of its ports taken.
 */
export async function nextFreeOffset(offset: number, tries = 60): Promise<number | undefined> {
  const max = 50_000;
  const above = Array.from({ length: tries }, (_, i) => offset + 100 * (i + 1)).filter((o) => o <= max);
  const below = Array.from({ length: tries }, (_, i) => 100 * i).filter((o) => o < offset);
  for (const candidate of [...above, ...below].slice(0, tries)) {
    const free = await Promise.all(allStackPorts(candidate).map(portFree));
    if (free.every(Boolean)) return candidate;
  }
  return undefined;
}
