import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTS, projectDir } from './bench-data.js';
import { type FreshStacksResult, freshStackClones } from './fresh-stacks.js';
import { ensureRepo, type GeneratedRepo, placeRepo, type RepoSpec } from './repo-gen.js';
import { renderFreshStacks } from './report-fresh-stacks.js';
import type { BenchResults } from './results.js';

/**
 * The fresh-stacks workload with real parts: two stacks started one after the other on the same
 * data folder (a 2 MiB repository in place of the large and the small project), one warm-up and
 * one large clone through each one's router with real `git` and OpenSSH, each stack stopped.
 */
const TINY: RepoSpec = {
  name: 'fresh-tiny',
  seed: 'fresh-stacks-test-v1',
  files: 8,
  fileBytes: 256 * 1024,
  filesPerCommit: 4,
  text: false,
};
const STARTS = 2;

/** Processes that run with this data folder (every service of a stack started on it gets it). */
function processesOf(dataDir: string): number[] {
  const needle = `STACK_DATA_DIR=${dataDir}\0`;
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (`${readFileSync(`/proc/${name}/environ`, 'latin1')}\0`.includes(needle)) pids.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

let dir: string;
let dataDir: string;
let repo: GeneratedRepo;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fresh-stacks-'));
  dataDir = join(dir, 'world');
  repo = await ensureRepo(join(dir, 'cache'), TINY);
  await placeRepo(repo, projectDir(dataDir, PROJECTS.large.path, PROJECTS.large.cell));
  await placeRepo(repo, projectDir(dataDir, PROJECTS.small.path, PROJECTS.small.cell));
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the large clone on fresh stacks', () => {
  it('starts, clones through and stops one stack per start, and reports min / median / max of the router CPU', async () => {
    // While the workload runs, how many processes run on the data folder (so the check below can see
    // a stack's); each start is logged once its stack is stopped: what still runs on it then.
    let seen = 0;
    const sampler = setInterval(() => {
      seen = Math.max(seen, processesOf(dataDir).length);
    }, 250);
    const leftAfter: number[][] = [];
    let r: FreshStacksResult;
    try {
      r = await freshStackClones({
        dataDir,
        env: { STACK_GEO: 'off', BRIDGE_MAX_TUNNELS_PER_USER: '0' },
        baseEnv: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
        scratch: join(dir, 'scratch'),
        starts: STARTS,
        idleMs: 300,
        head: repo.head,
        timeoutMs: 60_000,
        log: (line) => {
          process.stderr.write(`${line}\n`);
          if (line.startsWith('fresh stack ')) leftAfter.push(processesOf(dataDir));
        },
      });
    } finally {
      clearInterval(sampler);
    }
    expect(seen).toBeGreaterThan(5);
    expect(leftAfter).toEqual([[], []]);
    expect(r.runs).toHaveLength(STARTS);
    for (const run of r.runs) {
      expect(run.routerCpu).toBeGreaterThan(0);
      expect(run.wallMs).toBeGreaterThan(0);
    }
    const [a = 0, b = 0] = r.runs.map((x) => x.routerCpu);
    expect(r.routerCpu).toEqual({ min: Math.min(a, b), median: (a + b) / 2, max: Math.max(a, b) });

    const perGiB = (x: number) => ((x / repo.packBytes) * 1024 ** 3).toFixed(2);
    const shown = (x: number) => `${x.toFixed(2)} s (${perGiB(x)} s/GiB)`;
    const results = { repos: { large: { packBytes: repo.packBytes } }, freshStacks: { ok: true, value: r } };
    const rendered = renderFreshStacks(results as unknown as BenchResults);
    expect(rendered[1]).toContain('warmed up by one small clone, then idle for 0.3 s;');
    expect(rendered.at(-1)).toBe(
      `2 starts: min ${shown(r.routerCpu.min)}, median ${shown(r.routerCpu.median)}, max ${shown(r.routerCpu.max)}; each start: ${a.toFixed(2)}, ${b.toFixed(2)} s.`,
    );
  }, 180_000);
});
