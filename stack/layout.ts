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
    ...DEMO_CELLS.flatMap((c) => [p.rails(c.id), p.bridge(c.id), p.bridgeMetrics(c.id), p.gitaly(c.id)]),
  ];
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/**
 * A STACK_PORT_OFFSET, a multiple of 100 from `base` up, whose ports are all free right now, so a
 * test or benchmark stack can run beside a developer's `npm start` and beside each other.
 */
export async function findFreeOffset(base: number, slots: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = base + 100 * Math.floor(Math.random() * slots);
    const free = await Promise.all(allStackPorts(offset).map(portFree));
    if (free.every(Boolean)) return offset;
  }
  throw new Error('no free port range for a stack');
}
