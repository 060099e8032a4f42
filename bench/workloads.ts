/**
 * @file The workloads of one run that `--only` picks, in the full benchmark's order: the stack's own
 * (idle memory, the slow reader), then, after the throughput workload, the git ones every contender
 * runs (large and history clones, small clones, concurrent clones, push), scale-out, and last the
 * two that stop the run's stack: the large clone on fresh stacks, world start-up.
 */
import { CELLS_USER, log, PROJECTS } from './bench-data.js';
import { freshStackClones } from './fresh-stacks.js';
import { contenderEntries, type GitWorkloadContext, pushes, repeatedClones } from './git-workloads.js';
import type { BenchOptions, WorkloadId } from './options.js';
import type { FailureLog } from './outcome.js';
import { type GeneratedRepo, placeRepo } from './repo-gen.js';
import type { BenchResults } from './results.js';
import { type ScaleOutBurst, scaleOut } from './scale-out.js';
import { concurrentClones, sequentialClones } from './small-clones.js';
import { largeClones } from './ssh-ciphers.js';
import type { BenchStack } from './stack-runner.js';
import { idleMemory, type SlowReaderTarget, slowReadBridge, slowReadRouter } from './stack-workloads.js';
import { MIB } from './stats.js';
import { measureWorldStartup, type WorldStartupResult } from './world-startup.js';

export interface RunState {
  o: BenchOptions;
  stack: BenchStack | undefined;
  /** Why the stack is not running, when it is not. */
  stackMissing: string | undefined;
  failures: FailureLog;
  results: BenchResults;
}

const wants = (r: RunState, id: WorkloadId) => r.o.only.has(id);

/** Idle memory and idle tunnels, then the slow reader (straight from the bridge, then through the router). */
export async function stackWorkloads(r: RunState, slow: GeneratedRepo): Promise<void> {
  const { o, results } = r;
  if (wants(r, 'memory')) {
    results.idleMemory = await r.failures.attempt('idle memory and idle tunnels', async () => {
      if (!r.stack) throw new Error(r.stackMissing);
      log(`memory: idle RSS, then ${o.idleTunnels} idle tunnels`);
      return idleMemory(r.stack, PROJECTS.large.path, o.idleTunnels, log);
    });
  }
  if (!wants(r, 'slow-reader')) return;
  const target: SlowReaderTarget = {
    project: PROJECTS.slow.path,
    cell: PROJECTS.slow.cell,
    username: PROJECTS.slow.username,
    head: slow.head,
    packBytes: slow.packBytes,
  };
  const timeout = Math.max(o.opTimeoutMs, (4 * slow.packBytes * 1000) / o.slowReadRate);
  log(
    `slow reader: ${(slow.packBytes / MIB).toFixed(0)} MiB at ${o.slowReadRate / MIB} MiB/s, bridge then router`,
  );
  results.slowReader = {
    bridge: await r.failures.attempt('slow reader straight from the bridge', async () => {
      if (!r.stack) throw new Error(r.stackMissing);
      return slowReadBridge(r.stack, target, o.slowReadRate, timeout);
    }),
    router: await r.failures.attempt('slow reader through the router', async () => {
      if (!r.stack) throw new Error(r.stackMissing);
      return slowReadRouter(r.stack, target, o.slowReadRate, timeout);
    }),
  };
}

/** The repositories the git workloads clone and push. */
export interface GitWorkloadRepos {
  large: GeneratedRepo;
  history: GeneratedRepo;
  small: GeneratedRepo;
  pushSource: GeneratedRepo;
  /** Where the small repository is served from (the push target). */
  smallDir: string;
}

/** Every contender's large and history clones, small clones, concurrent clones and pushes. */
export async function gitWorkloads(
  r: RunState,
  ctx: GitWorkloadContext,
  repos: GitWorkloadRepos,
): Promise<void> {
  const { o, results } = r;
  const { large, history } = repos;
  if (wants(r, 'large-clone')) {
    log(`large clone: ${o.largeCloneRuns} round(s), ${(large.packBytes / MIB).toFixed(0)} MiB pack`);
    const clones = await largeClones(ctx, o.largeCloneRuns);
    results.largeClone = clones.byContender;
    results.largeCloneAesGcm = clones.aesGcm;
  }
  if (wants(r, 'history-clone')) {
    log(
      `history clone: ${o.largeCloneRuns} round(s), ${(history.packBytes / MIB).toFixed(0)} MiB pack of ${o.historyRepo.history?.commits} commits`,
    );
    results.historyClone = await repeatedClones(ctx, o.largeCloneRuns, 'history', contenderEntries(ctx));
  }
  if (wants(r, 'small-clone')) {
    log(`small clones: ${o.sequentialClones} sequential per contender`);
    results.smallClone = await sequentialClones(ctx, o.sequentialClones);
  }
  if (wants(r, 'concurrency')) {
    results.concurrency = [];
    for (const level of o.concurrency) {
      log(`concurrency: ${level} clones at once`);
      results.concurrency.push({ level, results: await concurrentClones(ctx, level) });
    }
  }
  if (wants(r, 'push')) {
    log(`push: ${((o.pushObjects.files * o.pushObjects.fileBytes) / MIB).toFixed(0)} MiB of new objects`);
    results.push = await pushes(
      ctx,
      { source: repos.pushSource, base: repos.small, targetDir: repos.smallDir, url: (c) => c.url('small') },
      o.pushRuns,
    );
    // The last push left its objects in the small repository; the workloads after this one (the
    // scale-out's thousand "small" clones) must clone what the report names small.
    await placeRepo(repos.small, repos.smallDir);
  }
}

/** What the scale-out workload takes from the run besides its state. */
export interface ScaleOutInputs {
  stackEnv: Record<string, string>;
  baseEnv: NodeJS.ProcessEnv;
  runDir: string;
  /** `main` of the small repository, which every clone must get. */
  smallHead: string;
}

/** Two routers behind HAProxy (`scale-out.ts`): bursts of small clones, then one router killed. */
export async function scaleOutWorkload(r: RunState, inputs: ScaleOutInputs): Promise<void> {
  if (!wants(r, 'scale-out')) return;
  const n = r.o.scaleOutClones;
  r.results.scaleOut = await r.failures.attempt('scale-out: two routers behind HAProxy', async () => {
    if (!r.stack) throw new Error(r.stackMissing);
    const user = r.stack.json.users.find((u) => u.username === CELLS_USER);
    if (!user) throw new Error(`stack.json has no user ${CELLS_USER}`);
    log(`scale-out: ${n} concurrent clones through two routers, then one, then one killed`);
    const v = await scaleOut({
      stack: r.stack,
      stackEnv: inputs.stackEnv,
      baseEnv: inputs.baseEnv,
      dir: inputs.runDir,
      project: PROJECTS.small.path,
      head: inputs.smallHead,
      privateKey: user.privateKey,
      clones: n,
      timeoutMs: r.o.opTimeoutMs,
      log,
    });
    const bursts: Array<[string, Pick<ScaleOutBurst, 'errors' | 'errorCauses' | 'firstError'>]> = [
      ['one router', v.alone],
      ['two routers', v.pair],
      ['after the failover', v.failover.after],
    ];
    for (const [what, b] of bursts) {
      if (b.errors === 0) continue;
      const causes = Object.entries(b.errorCauses).map(([cause, count]) => `${count} × ${cause}`);
      r.failures.record(
        `scale-out, ${what}: ${b.errors} of ${n} clones failed (${causes.join('; ')})`,
        b.firstError ?? '',
      );
    }
    return v;
  });
}

/** What the fresh-stacks workload takes from the run besides its state. */
export interface FreshStacksInputs {
  /** The run folder with the repositories placed (the fresh stacks' data folder). */
  runDir: string;
  stackEnv: Record<string, string>;
  baseEnv: NodeJS.ProcessEnv;
  scratch: string;
  /** `main` of the large repository. */
  head: string;
  /** Stops the run's stack first (each fresh stack is started on the same data). */
  stopStack(): Promise<void>;
}

/** The large clone on fresh stacks (`fresh-stacks.ts`), the run's stack stopped first. */
export async function freshStacksWorkload(r: RunState, i: FreshStacksInputs): Promise<void> {
  if (!wants(r, 'fresh-stacks')) return;
  await i.stopStack();
  log(`large clone on ${r.o.freshStarts} fresh stacks`);
  r.results.freshStacks = await r.failures.attempt('large clone on fresh stacks', () =>
    freshStackClones({
      dataDir: i.runDir,
      env: i.stackEnv,
      baseEnv: i.baseEnv,
      scratch: i.scratch,
      starts: r.o.freshStarts,
      idleMs: r.o.freshIdleMs,
      head: i.head,
      timeoutMs: r.o.opTimeoutMs,
      log,
    }),
  );
}

/** Worlds of each size, started one after the other once every server of the run is stopped. */
export async function worldStartupWorkload(r: RunState, stopAll: () => Promise<void>): Promise<void> {
  if (!wants(r, 'world-startup')) return;
  await stopAll();
  r.results.worldStartup = await r.failures.attempt('world start-up', async () => {
    const out: WorldStartupResult[] = [];
    for (const n of r.o.worldCells) {
      const w = await measureWorldStartup(n);
      log(`world of ${n} cells: first ${w.firstMs} ms, warm ${w.warmMs} ms, ${w.rssMiB} MiB RSS`);
      out.push(w);
    }
    return out;
  });
}
