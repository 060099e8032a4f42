/**
 * @file World start-up (issue 22's measure): how long `startWorld` (`fixture/`) takes until every
 * service of a world of N cells is listening, on a fresh data folder (first start: keys, secrets and
 * repositories created) and again on the same folder (warm start), and the RSS of the whole world
 * (the stack's main process and every service) once it is up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWorld } from '../fixture/index.js';
import type { TopologyFile } from '../lib/contracts/topology-file.js';
import { childPids, round, rssKiB } from './proc.js';

export interface WorldStartupResult {
  cells: number;
  /** Processes of the world (main + services). */
  processes: number;
  firstMs: number;
  warmMs: number;
  /** Sum of VmRSS of every process of the world after the warm start, MiB. */
  rssMiB: number;
}

/** A world of `n` cells, the first legacy: one organization, group, project and user per cell. */
export function startupTopology(n: number): TopologyFile {
  const cells = Array.from({ length: n }, (_, i) => i + 1);
  return {
    version: 1,
    cells: cells.map((i) => ({ name: `bench_c${i}`, region: 'r', ...(i === 1 ? { legacy: true } : {}) })),
    organizations: cells.map((i) => ({ path: `org${i}`, cell: `bench_c${i}` })),
    namespaces: cells.map((i) => ({ path: `group${i}`, kind: 'group' as const, organization: `org${i}` })),
    projects: cells.map((i) => ({ path: `group${i}/project`, visibility: 'private' as const })),
    users: cells.map((i) => ({ username: `user${i}`, defaultOrganization: `org${i}` })),
    members: cells.map((i) => ({ user: `user${i}`, namespace: `group${i}`, role: 'developer' as const })),
  };
}

/** Every process of the tree under `pid`, `pid` included. */
function treePids(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childPids(out[i] as number));
  return out;
}

async function timedStart(topology: string, dataDir: string) {
  const started = performance.now();
  const world = await startWorld({ topology, dataDir });
  return { world, ms: performance.now() - started };
}

/** Starts a world of `n` cells twice on one data folder; measures both starts and the warm world's RSS. */
export async function measureWorldStartup(n: number): Promise<WorldStartupResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cells-bench-world-'));
  try {
    const topology = join(dir, 'topology.json');
    writeFileSync(topology, `${JSON.stringify(startupTopology(n), null, 2)}\n`);
    const dataDir = join(dir, 'data');
    const first = await timedStart(topology, dataDir);
    await first.world.stop();
    const warm = await timedStart(topology, dataDir);
    try {
      const pids = treePids(warm.world.pid);
      const kib = pids.reduce((sum, p) => sum + (rssKiB(p) ?? 0), 0);
      return {
        cells: n,
        processes: pids.length,
        firstMs: round(first.ms, 0),
        warmMs: round(warm.ms, 0),
        rssMiB: round(kib / 1024, 1),
      };
    } finally {
      await warm.world.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
