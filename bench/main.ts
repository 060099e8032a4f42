import { existsSync } from 'node:fs';
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  DATA,
  facts,
  log,
  PROFILED,
  PROJECTS,
  projectDir,
  ROOT,
  STREAM_BRIDGE,
  warmPageCache,
} from './bench-data.js';
import { gitContenders, sshAlgorithms, warmUp } from './contenders.js';
import { type FreshStacksResult, freshStackClones } from './fresh-stacks.js';
import type { GitWorkloadContext, RepoRole, ServedRepo } from './git-workloads.js';
import { type GrpcFloor, startGrpcFloor } from './grpc-floor.js';
import { loadOneMinute, machineInfo, runInfo } from './machine.js';
import { type NginxServer, startNginx } from './nginx.js';
import { benchNotes } from './notes.js';
import { type OpenSshServer, startOpenSsh } from './openssh.js';
import { type BenchOptions, parseArgs, USAGE, UsageError, WORKLOADS, type WorkloadId } from './options.js';
import { FailureLog, type Outcome } from './outcome.js';
import { killTracked } from './proc.js';
import { renderProfiles, summarizeProfiles } from './profile.js';
import { ensureRepo, type GeneratedRepo, placeRepo } from './repo-gen.js';
import { ratioLines, renderMarkdown } from './report.js';
import type { BenchResults } from './results.js';
import { writeResults } from './results-files.js';
import { type BenchStack, type ExtraBridge, startBenchStack, startExtraBridge } from './stack-runner.js';
import { MIB } from './stats.js';
import { evaluate } from './targets.js';
import { benchThroughput } from './throughput-workload.js';
import { gitWorkloads, type RunState, scaleOutWorkload, stackWorkloads } from './workloads.js';
import { measureWorldStartup, type WorldStartupResult } from './world-startup.js';

/**
 * `npm run bench [-- --quick] [--profile] [--only …]`: every contender in the same run on the same
 * data — direct file://, a private OpenSSH, the cells path (router → bridge → Rails → Gitaly), the
 * bridge alone and the grpc-js floor — then a markdown table, JSON and the ratios that matter.
 */
class Bench {
  readonly failures = new FailureLog();
  private stack: BenchStack | undefined;
  private sshd: OpenSshServer | undefined;
  private nginx: NginxServer | undefined;
  private floor: GrpcFloor | undefined;
  private streamBridge: ExtraBridge | undefined;
  private streamBridgeStart: Outcome<void> = { ok: false, error: 'not started' };
  private readonly runDir: string;
  private readonly profileDir: string;
  private readonly stackEnv: Record<string, string>;

  constructor(private readonly opts: BenchOptions) {
    this.runDir = join(DATA, `run-${opts.mode}`);
    this.profileDir = join(DATA, `profiles-${opts.mode}`);
    // One benchmark user opens up to max(concurrency, idle tunnels) tunnels at once: lift the
    // bridge's per-user cap (off by default; kept off explicitly) so the workload, not a policy, is measured. The mock
    // Gitalys also serve the bidi SSHUploadPack (beside the sidechannel) for the stream contenders.
    // No Geo secondary: its replication of every benchmark push would load the machine meanwhile.
    // The router's startups cap is the private sshd's (`MaxStartups 1000`), whatever its default.
    this.stackEnv = {
      BRIDGE_MAX_TUNNELS_PER_USER: '0',
      GITALY_LEGACY_UPLOAD_PACK: 'true',
      STACK_GEO: 'off',
      ROUTER_MAX_STARTUPS: '1000',
    };
    if (opts.cellProtocol) this.stackEnv.ROUTER_CELL_PROTOCOL = opts.cellProtocol;
    if (opts.profile) {
      this.stackEnv.NODE_OPTIONS = `--import=${pathToFileURL(join(ROOT, 'dist', 'bench', 'cpu-profiler.js')).href}`;
      this.stackEnv.BENCH_PROFILE_DIR = this.profileDir;
    }
  }

  private wants(id: WorkloadId): boolean {
    return this.opts.only.has(id);
  }

  async stopAll(): Promise<void> {
    await this.streamBridge
      ?.stop()
      .catch((err: unknown) => this.failures.record('stopping the stream-mode bridge', err));
    await this.stack?.stop().catch((err: unknown) => this.failures.record('stopping the stack', err));
    await this.sshd?.stop().catch((err: unknown) => this.failures.record('stopping sshd', err));
    await this.nginx?.stop().catch((err: unknown) => this.failures.record('stopping nginx', err));
    this.nginx = undefined;
    await this.floor?.stop().catch((err: unknown) => this.failures.record('stopping the gRPC floor', err));
    this.streamBridge = undefined;
    this.stack = undefined;
    this.sshd = undefined;
    this.floor = undefined;
    const killed = killTracked();
    if (killed > 0)
      this.failures.record('cleanup', new Error(`${killed} benchmark processes had to be killed`));
  }

  /** Removes the run folder, keeping the services' logs in `bench/data/logs-<mode>` when something failed. */
  async removeRunDir(): Promise<void> {
    const logs = join(this.runDir, 'logs');
    const kept = join(DATA, `logs-${this.opts.mode}`);
    await rm(kept, { recursive: true, force: true });
    if (this.failures.failures.length > 0 && existsSync(logs)) {
      await cp(logs, kept, { recursive: true });
      process.stderr.write(`service logs of the failed run kept in ${kept}\n`);
    }
    await rm(this.runDir, { recursive: true, force: true });
  }

  /** The run's repositories, generated once (cached) and placed where the stack and sshd serve them. */
  private async placeRepos() {
    const o = this.opts;
    const cache = join(DATA, 'repos');
    log(`mode ${o.mode}; repositories cached in ${cache}`);
    const large = await ensureRepo(cache, o.largeRepo, { log });
    const small = await ensureRepo(cache, o.smallRepo, { log });
    const slow = o.slowRepo === o.largeRepo ? large : await ensureRepo(cache, o.slowRepo, { log });
    const pushSource = await ensureRepo(cache, o.pushObjects, { base: small, branch: 'bench-push', log });
    const history = await ensureRepo(cache, o.historyRepo, { log });

    await this.removeRunDir();
    await mkdir(this.runDir, { recursive: true });
    const dir = (p: { path: string; cell: string }) => projectDir(this.runDir, p.path, p.cell);
    const dirs = {
      large: dir(PROJECTS.large),
      small: dir(PROJECTS.small),
      slow: dir(PROJECTS.slow),
      history: dir(PROJECTS.history),
    };
    await placeRepo(large, dirs.large);
    await placeRepo(small, dirs.small);
    await placeRepo(slow, dirs.slow);
    await placeRepo(history, dirs.history);
    for (const d of [dirs.large, dirs.slow, dirs.history]) await warmPageCache(d);
    return { large, small, slow, pushSource, history, dirs };
  }

  /** OpenSSH, the stack (with the stream-mode bridge) and the gRPC floor; each may fail on its own. */
  private async startServers(dirs: { large: string; small: string; history: string }) {
    const sshdStart = await this.failures.attempt('starting the OpenSSH server', async () => {
      this.sshd = await startOpenSsh(join(this.runDir, 'sshd'), {
        [PROJECTS.large.path]: dirs.large,
        [PROJECTS.small.path]: dirs.small,
        [PROJECTS.history.path]: dirs.history,
      });
      log(`OpenSSH server on 127.0.0.1:${this.sshd.port} (pid ${this.sshd.pid})`);
    });
    const nginxStart = await this.failures.attempt('starting nginx + fcgiwrap', async () => {
      this.nginx = await startNginx(
        join(this.runDir, 'nginx'),
        {
          [PROJECTS.large.path]: dirs.large,
          [PROJECTS.small.path]: dirs.small,
          [PROJECTS.history.path]: dirs.history,
        },
        { fcgiChildren: this.opts.fcgiChildren, maxConcurrency: Math.max(...this.opts.concurrency) },
      );
      log(
        `nginx on 127.0.0.1:${this.nginx.port} (pid ${this.nginx.pid}), ${this.opts.fcgiChildren} fcgiwrap processes`,
      );
    });
    if (this.opts.profile) {
      await rm(this.profileDir, { recursive: true, force: true });
      await mkdir(this.profileDir, { recursive: true });
    }
    const stackStart = await this.failures.attempt('starting the stack', async () => {
      this.stack = await startBenchStack(this.runDir, { env: this.stackEnv, timeoutMs: 120_000 });
      log(`stack up: router ssh ${this.stack.json.router.ssh}, pids ${JSON.stringify(this.stack.json.pids)}`);
    });
    if (this.stack) await this.startStreamBridge(this.stack);
    const floorStart = await this.failures.attempt('starting the gRPC floor server', async () => {
      this.floor = await startGrpcFloor();
    });
    return { sshdStart, stackStart, floorStart, nginxStart };
  }

  async run(): Promise<BenchResults> {
    const o = this.opts;
    const { large, small, slow, pushSource, history, dirs } = await this.placeRepos();
    const home = join(this.runDir, 'home');
    const scratch = join(this.runDir, 'scratch');
    await mkdir(home, { recursive: true });
    await mkdir(scratch, { recursive: true });
    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      LANG: 'C',
    };
    const { sshdStart, stackStart, floorStart, nginxStart } = await this.startServers(dirs);

    const repoOf: Record<RepoRole, ServedRepo> = {
      large: { role: 'large', project: PROJECTS.large.path, dir: dirs.large, repo: large },
      small: { role: 'small', project: PROJECTS.small.path, dir: dirs.small, repo: small },
      history: { role: 'history', project: PROJECTS.history.path, dir: dirs.history, repo: history },
    };
    const servers = { sshd: this.sshd, stack: this.stack };
    const contenders = gitContenders(baseEnv, repoOf, {
      ...servers,
      nginx: this.nginx,
      sshdStart,
      stackStart,
      nginxStart,
    });
    const ctx: GitWorkloadContext = {
      contenders,
      repos: repoOf,
      scratch,
      opTimeoutMs: o.opTimeoutMs,
      failures: this.failures,
      log,
    };
    await warmUp(ctx);
    const ssh = await sshAlgorithms(servers, this.failures);
    if (o.profile && this.stack) {
      // Start the services' profilers now that start-up and warm-up are over (see cpu-profiler.ts);
      // only the services that preload it (SIGUSR2 would end any other, e.g. the Topology Service).
      for (const [name, pid] of Object.entries(this.stackPids))
        if (PROFILED.test(name)) process.kill(pid, 'SIGUSR2');
    }

    const results = this.emptyResults({ large, small, slow, pushSource, history }, ssh);
    const stackMissing = stackStart.ok ? undefined : `the stack is not running: ${stackStart.error}`;
    const state: RunState = { o, stack: this.stack, stackMissing, failures: this.failures, results };
    await stackWorkloads(state, slow);
    if (this.wants('throughput')) {
      results.throughput = await benchThroughput(
        o,
        {
          stack: this.stack,
          streamBridge: this.streamBridge,
          streamBridgeStart: this.streamBridgeStart,
          floor: this.floor,
          floorStart,
        },
        { large, smallHead: small.head },
        stackMissing ?? '',
        this.failures,
      );
    }
    await gitWorkloads(state, ctx, { large, history, small, pushSource, smallDir: dirs.small });
    await scaleOutWorkload(state, {
      stackEnv: this.stackEnv,
      baseEnv,
      runDir: this.runDir,
      smallHead: small.head,
    });
    // Last before world start-up: it stops the run's stack.
    if (this.wants('fresh-stacks'))
      results.freshStacks = await this.freshStacks(baseEnv, scratch, large.head);
    if (this.wants('world-startup')) results.worldStartup = await this.worldStartup();
    results.run.loadAverage.end = loadOneMinute();
    return results;
  }

  /** The large clone on fresh stacks (`fresh-stacks.ts`): the run's stack is stopped first. */
  private async freshStacks(
    baseEnv: NodeJS.ProcessEnv,
    scratch: string,
    head: string,
  ): Promise<Outcome<FreshStacksResult>> {
    await this.streamBridge
      ?.stop()
      .catch((err: unknown) => this.failures.record('stopping the stream-mode bridge', err));
    await this.stack?.stop().catch((err: unknown) => this.failures.record('stopping the stack', err));
    this.streamBridge = undefined;
    this.stack = undefined;
    const o = this.opts;
    log(`large clone on ${o.freshStarts} fresh stacks`);
    return this.failures.attempt('large clone on fresh stacks', () =>
      freshStackClones({
        dataDir: this.runDir,
        env: this.stackEnv,
        baseEnv,
        scratch,
        starts: o.freshStarts,
        head,
        timeoutMs: o.opTimeoutMs,
        log,
      }),
    );
  }

  /** Worlds of each size, started one after the other while nothing else of the benchmark runs. */
  private async worldStartup(): Promise<Outcome<WorldStartupResult[]>> {
    await this.stopAll();
    return this.failures.attempt('world start-up', async () => {
      const out: WorldStartupResult[] = [];
      for (const n of this.opts.worldCells) {
        const r = await measureWorldStartup(n);
        log(`world of ${n} cells: first ${r.firstMs} ms, warm ${r.warmMs} ms, ${r.rssMiB} MiB RSS`);
        out.push(r);
      }
      return out;
    });
  }

  /** The results before any workload ran: the run, the machine, the settings and the repositories. */
  private emptyResults(
    repos: Record<'large' | 'small' | 'slow' | 'pushSource' | 'history', GeneratedRepo>,
    ssh: BenchResults['settings']['ssh'],
  ): BenchResults {
    const o = this.opts;
    const results: BenchResults = {
      mode: o.mode,
      run: runInfo(),
      machine: machineInfo(),
      settings: {
        largeCloneRuns: o.largeCloneRuns,
        sequentialClones: o.sequentialClones,
        concurrency: o.concurrency,
        pushRuns: o.pushRuns,
        idleTunnels: o.idleTunnels,
        throughputRuns: o.throughputRuns,
        slowReadRateMiBps: o.slowReadRate / MIB,
        stackEnv: this.stackEnv,
        ssh,
      },
      repos: {
        large: facts(repos.large),
        small: facts(repos.small),
        slow: facts(repos.slow),
        push: facts(repos.pushSource),
        history: { ...facts(repos.history), commits: (o.historyRepo.history?.commits ?? 0) + 1 },
      },
      failures: this.failures.failures,
      ratios: [],
      targets: [],
      notes: benchNotes(o, this.stackEnv, repos.slow),
    };
    results.repos.push = { ...facts(repos.pushSource), files: o.pushObjects.files };
    return results;
  }

  /** The stream-mode bridge beside the stack's (the stream contenders fail with its error when it cannot start). */
  private async startStreamBridge(stack: BenchStack): Promise<void> {
    this.streamBridgeStart = await this.failures.attempt('starting the stream-mode bridge', async () => {
      this.streamBridge = await startExtraBridge(stack, PROJECTS.large.cell, STREAM_BRIDGE, {
        overrides: { gitalyUploadPack: 'stream' },
        env: this.stackEnv,
        timeoutMs: 30_000,
      });
      log(`stream-mode bridge on ${this.streamBridge.url} (pid ${this.streamBridge.pid})`);
    });
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
    const extra = this.streamBridge ? { [STREAM_BRIDGE]: this.streamBridge.pid } : {};
    return { ...(this.stack?.json.pids ?? {}), ...extra };
  }
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message ? `${err.message}\n\n` : ''}${USAGE}\n`);
      return err.message ? 64 : 0;
    }
    throw err;
  }
  const bench = new Bench(opts);
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${sig}: stopping every process the benchmark started\n`);
    void bench
      .stopAll()
      .then(() => bench.removeRunDir())
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const started = Date.now();
  let results: BenchResults;
  let pids: Record<string, number> = {};
  try {
    results = await bench.run();
    pids = bench.stackPids;
  } finally {
    pids = { ...pids, ...bench.stackPids };
    await bench.stopAll();
    await bench.removeRunDir();
  }
  const profile = await bench.profiles(pids).catch((err: unknown) => {
    bench.failures.record('summarizing profiles', err);
    return undefined;
  });
  evaluate(results);
  const markdown = renderMarkdown(results);
  const written = await writeResults(results, opts.only.size === WORKLOADS.length, markdown, profile);
  process.stdout.write(`\n${markdown}\n`);
  if (profile) process.stdout.write(`CPU profiles:\n\n${profile}\n`);
  process.stdout.write(
    `Results: ${written.join(', ')} (${((Date.now() - started) / 1000).toFixed(0)} s)\n\n`,
  );
  for (const line of ratioLines(results)) process.stdout.write(`${line}\n`);
  const failures = bench.failures.failures;
  if (failures.length > 0) {
    process.stderr.write(
      `\n${failures.length} failure(s):\n${failures.map((f) => `  ✗ ${f.what}: ${f.error}`).join('\n')}\n`,
    );
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `benchmark error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    killTracked();
    process.exit(1);
  },
);
