import { createServer } from 'node:net';
import { ephemeralPortStart, type GeoPorts, HOST, type StackPorts } from './layout.js';
import { shellHost } from './topology-plan.js';

/**
 * `--free-ports`: every port of a stack chosen at random among those free right now (a bind test),
 * from 10 000 up to below the kernel's ephemeral range, so two worlds started at once (or an
 * outgoing connection) do not pick the same. A port taken between this test and the service's own
 * bind still fails that start with EXIT_ADDRESS_IN_USE, and the caller starts again.
 */

const LOW = 10_000;

function freeOn(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** A random port free on every one of `hosts`, not in `taken` (which it joins). */
async function pick(taken: Set<number>, hosts: readonly string[] = [HOST]): Promise<number> {
  const high = ephemeralPortStart() - 1;
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = LOW + Math.floor(Math.random() * (high - LOW));
    if (taken.has(port)) continue;
    const free = await Promise.all(hosts.map((h) => freeOn(port, h)));
    if (free.every(Boolean)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${LOW} and ${high}`);
}

function lookup<T>(map: Map<number, T>, what: string): (cellId: number) => T {
  return (cellId) => {
    const value = map.get(cellId);
    if (value === undefined) throw new Error(`no ${what} port planned for cell ${cellId}`);
    return value;
  };
}

/** Free ports for a stack of the cells `cellIds` with Geo sites for `geoCellIds`. */
export async function pickFreePorts(
  cellIds: readonly number[],
  geoCellIds: readonly number[],
): Promise<StackPorts> {
  const taken = new Set<number>();
  const next = () => pick(taken);
  const perCell = async () => new Map(await serial(cellIds, async (id) => [id, await next()] as const));
  const fixed = {
    routerSsh: await next(),
    routerHttp: await next(),
    routerMetrics: await next(),
    shell: await pick(taken, [HOST, ...cellIds.map((id) => shellHost({ id }))]),
    topologyGrpc: await next(),
    topologyHttp: await next(),
    routerTopologySsh: await next(),
    routerTopologyHttp: await next(),
    routerTopologyMetrics: await next(),
  };
  const [rails, bridge, bridgeMetrics, gitaly] = [
    await perCell(),
    await perCell(),
    await perCell(),
    await perCell(),
  ];
  const geo = new Map<number, GeoPorts>();
  for (const id of geoCellIds) {
    geo.set(id, {
      ssh: await next(),
      http: await next(),
      rails: await next(),
      bridge: await next(),
      gitaly: await next(),
    });
  }
  return {
    ...fixed,
    rails: lookup(rails, 'Rails'),
    bridge: lookup(bridge, 'bridge'),
    bridgeMetrics: lookup(bridgeMetrics, 'bridge metrics'),
    gitaly: lookup(gitaly, 'Gitaly'),
    geo: lookup(geo, 'Geo'),
  };
}

async function serial<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await fn(item));
  return out;
}
