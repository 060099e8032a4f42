import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** The demo cells, in the order of the seed's topology (ids 1–4). */
export const DEMO_CELLS = [
  { id: 1, name: 'cell_us0', region: 'us', legacy: true },
  { id: 2, name: 'cell_us1', region: 'us', legacy: false },
  { id: 3, name: 'cell_eu0', region: 'eu', legacy: false },
  { id: 4, name: 'cell_eu1', region: 'eu', legacy: false },
] as const;

export type DemoCell = (typeof DEMO_CELLS)[number];

/** The demo cells as a router's `cells` setting, each reached at `url(cell)`. */
export function routerCells(url: (cell: DemoCell) => string) {
  return DEMO_CELLS.map((c) => ({ id: c.id, name: c.name, legacy: c.legacy, region: c.region, url: url(c) }));
}

export const HOST = '127.0.0.1';

/**
 * Where services bind and how they reach each other. Locally everything is on 127.0.0.1; under
 * compose each service binds 0.0.0.0 and is reached by its service name.
 */
export interface StackNet {
  bind: string;
  host(service: 'router' | 'bridge' | 'rails' | 'gitaly', cell?: DemoCell): string;
}

export const LOCAL_NET: StackNet = { bind: HOST, host: () => HOST };

/** Compose service names: router, bridge-us0, cell-us0, gitaly-us0, … */
export function composeServiceName(
  service: 'router' | 'bridge' | 'rails' | 'gitaly',
  cell?: DemoCell,
): string {
  if (service === 'router' || !cell) return 'router';
  const short = cell.name.replace(/^cell_/, '');
  return `${service === 'rails' ? 'cell' : service}-${short}`;
}

export const COMPOSE_NET: StackNet = { bind: '0.0.0.0', host: composeServiceName };

/** Every port of the stack; `offset` (STACK_PORT_OFFSET) is added to each default. */
export function stackPorts(offset: number) {
  return {
    routerSsh: 2222 + offset,
    routerHttp: 8080 + offset,
    routerMetrics: 8081 + offset,
    rails: (cellId: number) => 3000 + cellId + offset,
    bridge: (cellId: number) => 4000 + cellId + offset,
    bridgeMetrics: (cellId: number) => 4100 + cellId + offset,
    gitaly: (cellId: number) => 9000 + cellId + offset,
    /** The gitlab-shell layout: every cell's bridge on this port of its own 127.0.0.x. */
    shell: 4443 + offset,
    topologyGrpc: 9095 + offset,
    topologyHttp: 9096 + offset,
    routerTopologySsh: 2223 + offset,
    routerTopologyHttp: 8082 + offset,
    routerTopologyMetrics: 8083 + offset,
    /** The Geo secondary of cell_us0 (`geo-plan.ts`): its SSH entry, router HTTP, Rails, bridge, Gitaly. */
    geoSsh: 2224 + offset,
    geoHttp: 8084 + offset,
    geoRails: 3011 + offset,
    geoBridge: 4011 + offset,
    geoGitaly: 9011 + offset,
  };
}

export type StackPorts = ReturnType<typeof stackPorts>;

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

/** Every TCP port a stack with this offset binds. */
export function allStackPorts(offset: number): number[] {
  const p = stackPorts(offset);
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
    p.geoSsh,
    p.geoHttp,
    p.geoRails,
    p.geoBridge,
    p.geoGitaly,
    ...DEMO_CELLS.flatMap((c) => [p.rails(c.id), p.bridge(c.id), p.bridgeMetrics(c.id), p.gitaly(c.id)]),
  ];
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
function ephemeralPortStart(): number {
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
