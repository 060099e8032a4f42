/**
 * @file One benchmark run: the repositories placed, the servers started, the contenders warmed up,
 * then every workload `--only` picks in the full benchmark's order (`workloads.ts`), and the CPU
 * profiles summarized under `--profile`.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA, log, PROFILED, PROJECTS } from './bench-data.js';
import { gitContenders, sshAlgorithms, warmUp } from './contenders.js';
import type { GitWorkloadContext, RepoRole, ServedRepo } from './git-workloads.js';
import { loadOneMinute } from './machine.js';
import type { BenchOptions } from './options.js';
import { FailureLog } from './outcome.js';
import { renderProfiles, summarizeProfiles } from './profile.js';
import type { BenchResults } from './results.js';
import { type PlacedRepos, placeRepos, removeRunDir } from './run-repos.js';
import { RunServers, type ServerStarts } from './run-servers.js';
import { benchStackEnv, emptyResults, gitBaseEnv } from './run-settings.js';
import { benchThroughput } from './throughput-workload.js';
import {
  freshStacksWorkload,
  gitWorkloads,
  type RunState,
  scaleOutWorkload,
  stackWorkloads,
  worldStartupWorkload,
} from './workloads.js';

export class Bench {
  readonly failures = new FailureLog();
  private readonly runDir: string;
  private readonly profileDir: string;
  private readonly stackEnv: Record<string, string>;
  private readonly servers: RunServers;

  constructor(private readonly opts: BenchOptions) {
    this.runDir = join(DATA, `run-${opts.mode}`);
    this.profileDir = join(DATA, `profiles-${opts.mode}`);
    this.stackEnv = benchStackEnv(opts, this.profileDir);
    this.servers = new RunServers(opts, this.runDir, this.stackEnv, this.failures);
  }

  stopAll(): Promise<void> {
    return this.servers.stopAll();
  }

  /** Removes the run folder, keeping the services' logs in `bench/data/logs-<mode>` when something failed. */
  removeRunDir(): Promise<void> {
    return removeRunDir(this.runDir, this.opts.mode, this.failures.failures.length > 0);
  }

  /** The git contenders on the run's repositories, warmed up. */
  private async gitContext(
    repos: PlacedRepos,
    baseEnv: NodeJS.ProcessEnv,
    scratch: string,
    starts: ServerStarts,
  ): Promise<GitWorkloadContext> {
    const { dirs } = repos;
    const repoOf: Record<RepoRole, ServedRepo> = {
      large: { role: 'large', project: PROJECTS.large.path, dir: dirs.large, repo: repos.large },
      small: { role: 'small', project: PROJECTS.small.path, dir: dirs.small, repo: repos.small },
      history: { role: 'history', project: PROJECTS.history.path, dir: dirs.history, repo: repos.history },
    };
    const ctx: GitWorkloadContext = {
      contenders: gitContenders(baseEnv, repoOf, this.servers.gitServers(starts)),
      repos: repoOf,
      scratch,
      opTimeoutMs: this.opts.opTimeoutMs,
      failures: this.failures,
      log,
    };
    await warmUp(ctx);
    return ctx;
  }

  async run(): Promise<BenchResults> {
    const o = this.opts;
    const repos = await placeRepos(o, this.runDir);
    const home = join(this.runDir, 'home');
    const scratch = join(this.runDir, 'scratch');
    await mkdir(home, { recursive: true });
    await mkdir(scratch, { recursive: true });
    const baseEnv = gitBaseEnv(home);
    const starts = await this.servers.start(repos.dirs, o.profile ? this.profileDir : undefined);
    const ctx = await this.gitContext(repos, baseEnv, scratch, starts);
    const s = this.servers;
    const ssh = await sshAlgorithms({ sshd: s.sshd, stack: s.stack }, this.failures);
    if (o.profile && s.stack) {
      // Start the services' profilers now that start-up and warm-up are over (see cpu-profiler.ts);
      // only the services that preload it (SIGUSR2 would end any other, e.g. the Topology Service).
      for (const [name, pid] of Object.entries(this.stackPids))
        if (PROFILED.test(name)) process.kill(pid, 'SIGUSR2');
    }

    const results = emptyResults(o, this.stackEnv, this.failures, repos, ssh);
    const stackMissing = starts.stackStart.ok
      ? undefined
      : `the stack is not running: ${starts.stackStart.error}`;
    const state: RunState = { o, stack: s.stack, stackMissing, failures: this.failures, results };
    await stackWorkloads(state, repos.slow);
    if (o.only.has('throughput')) {
      results.throughput = await benchThroughput(
        o,
        {
          stack: s.stack,
          streamBridge: s.streamBridge,
          streamBridgeStart: s.streamBridgeStart,
          floor: s.floor,
          floorStart: starts.floorStart,
        },
        { large: repos.large, smallHead: repos.small.head },
        stackMissing ?? '',
        this.failures,
      );
    }
    await gitWorkloads(state, ctx, { ...repos, smallDir: repos.dirs.small });
    const common = { stackEnv: this.stackEnv, baseEnv, runDir: this.runDir };
    await scaleOutWorkload(state, { ...common, smallHead: repos.small.head });
    // Last: they stop the run's stack (fresh stacks), then every server (world start-up).
    await freshStacksWorkload(state, {
      ...common,
      scratch,
      head: repos.large.head,
      stopStack: () => s.stopStack(),
    });
    await worldStartupWorkload(state, () => s.stopAll());
    results.run.loadAverage.end = loadOneMinute();
    return results;
  }

  async profiles(pids: Record<string, number>): Promise<string | undefined> {
    if (!this.opts.profile) return undefined;
    const summaries = await summarizeProfiles(this.profileDir, pids);
    if (summaries.length === 0) {
      this.failures.record(
        'profiles',
        new Error(`no CPU profiles of the stack's services in ${this.profileDir}`),
      );
      return undefined;
    }
    return renderProfiles(
      summaries.filter((s) =>
        /^(router|bridge-cell_us0|bridge-stream-cell_us0|gitaly-cell_us0|mock-cell)$/.test(s.service),
      ),
    );
  }

  /** The stack's services and the benchmark's stream-mode bridge. */
  get stackPids(): Record<string, number> {
    return this.servers.stackPids;
  }
}
