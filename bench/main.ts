import { createReadStream, existsSync } from 'node:fs';
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../lib/proto.js';
import { hashedRepoPath } from '../lib/repo-path.js';
import { readSecretFile } from '../lib/secrets.js';
import { DEMO_PROJECTS } from '../stack/demo-topology.js';
import { stackPaths } from '../stack/layout.js';
import {
  CONTENDER_LABELS,
  concurrentClones,
  type GitContender,
  type GitWorkloadContext,
  largeClone,
  pushes,
  type ServedRepo,
  sequentialClones,
} from './git-workloads.js';
import { GitalyDirect } from './gitaly-direct.js';
import { type GrpcFloor, startGrpcFloor } from './grpc-floor.js';
import { loadOneMinute, machineInfo, runInfo } from './machine.js';
import {
  negotiatedAlgorithms,
  type OpenSshServer,
  type SshAlgorithms,
  sshCommandLine,
  startOpenSsh,
} from './openssh.js';
import { type BenchOptions, parseArgs, USAGE, UsageError, WORKLOADS, type WorkloadId } from './options.js';
import { FailureLog, type Outcome, okValue } from './outcome.js';
import { describeFailure, killTracked, run } from './proc.js';
import { renderProfiles, summarizeProfiles } from './profile.js';
import { ensureRepo, type GeneratedRepo, placeRepo } from './repo-gen.js';
import { evaluate, ratioLines, renderMarkdown } from './report.js';
import type { BenchResults, RepoFacts, ThroughputId } from './results.js';
import type { BenchStack } from './stack-runner.js';
import { startBenchStack } from './stack-runner.js';
import {
  bridgeThroughputRun,
  floorThroughputRun,
  gitalyThroughputRun,
  idleMemory,
  type SlowReaderTarget,
  slowReadBridge,
  slowReadRouter,
  summarizeThroughput,
  type ThroughputResult,
  type ThroughputRun,
  type ThroughputTarget,
} from './stack-workloads.js';
import { MIB } from './stats.js';

/**
 * `npm run bench [-- --quick] [--profile] [--only …]`: every contender in the same run on the same
 * data — direct file://, a private OpenSSH, the cells path (router → bridge → Rails → Gitaly), the
 * bridge alone and the grpc-js floor — then a markdown table, JSON and the ratios that matter.
 */
const ROOT = projectRoot();
const DATA = join(ROOT, 'bench', 'data');
const RESULTS = join(ROOT, 'bench', 'results');

/** The demo projects the benchmark repositories replace (see stack/demo-topology.ts). */
const PROJECTS = {
  large: { path: 'gitlab-org/gitlab', cell: 'cell_us0' },
  small: { path: 'gitlab-org/gitlab-test', cell: 'cell_us0' },
  slow: { path: 'my-company/my-project', cell: 'cell_eu0', username: 'alice' },
} as const;
/** The cells-path user: Maintainer of gitlab-org (clones and pushes a branch). */
const CELLS_USER = 'bob';

function log(line: string): void {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

function projectDir(dataDir: string, projectPath: string, cell: string): string {
  const project = DEMO_PROJECTS.find((p) => `${p.namespace}/${p.path}` === projectPath);
  if (!project) throw new Error(`no demo project ${projectPath}`);
  return join(stackPaths(dataDir).storage(cell), hashedRepoPath(project.id));
}

function facts(repo: GeneratedRepo): RepoFacts {
  return { packBytes: repo.packBytes, files: repo.spec.files, fileBytes: repo.spec.fileBytes };
}

/** Reads the pack files once so every contender starts with them in the page cache. */
async function warmPageCache(dir: string): Promise<void> {
  const packDir = join(dir, 'objects', 'pack');
  for (const f of await readdir(packDir)) {
    await new Promise<void>((resolve, reject) => {
      const s = createReadStream(join(packDir, f), { highWaterMark: 4 * MIB });
      s.on('data', () => undefined);
      s.once('end', resolve);
      s.once('error', reject);
    });
  }
}

class Bench {
  readonly failures = new FailureLog();
  private stack: BenchStack | undefined;
  private sshd: OpenSshServer | undefined;
  private floor: GrpcFloor | undefined;
  private readonly runDir: string;
  private readonly profileDir: string;
  private readonly stackEnv: Record<string, string>;
  private smallHead = '';

  constructor(private readonly opts: BenchOptions) {
    this.runDir = join(DATA, `run-${opts.mode}`);
    this.profileDir = join(DATA, `profiles-${opts.mode}`);
    // One benchmark user opens up to max(concurrency, idle tunnels) tunnels at once: lift the
    // bridge's per-user cap (default 50) so the workload, not a policy, is measured.
    this.stackEnv = { BRIDGE_MAX_TUNNELS_PER_USER: '0' };
    if (opts.profile) {
      this.stackEnv.NODE_OPTIONS = `--import=${pathToFileURL(join(ROOT, 'dist', 'bench', 'cpu-profiler.js')).href}`;
      this.stackEnv.BENCH_PROFILE_DIR = this.profileDir;
    }
  }

  private wants(id: WorkloadId): boolean {
    return this.opts.only.has(id);
  }

  async stopAll(): Promise<void> {
    await this.stack?.stop().catch((err: unknown) => this.failures.record('stopping the stack', err));
    await this.sshd?.stop().catch((err: unknown) => this.failures.record('stopping sshd', err));
    await this.floor?.stop().catch((err: unknown) => this.failures.record('stopping the gRPC floor', err));
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

  async run(): Promise<BenchResults> {
    const o = this.opts;
    const cache = join(DATA, 'repos');
    log(`mode ${o.mode}; repositories cached in ${cache}`);
    const large = await ensureRepo(cache, o.largeRepo, { log });
    const small = await ensureRepo(cache, o.smallRepo, { log });
    const slow = o.slowRepo === o.largeRepo ? large : await ensureRepo(cache, o.slowRepo, { log });
    const pushSource = await ensureRepo(cache, o.pushObjects, { base: small, branch: 'bench-push', log });
    this.smallHead = small.head;

    await this.removeRunDir();
    await mkdir(this.runDir, { recursive: true });
    const largeDir = projectDir(this.runDir, PROJECTS.large.path, PROJECTS.large.cell);
    const smallDir = projectDir(this.runDir, PROJECTS.small.path, PROJECTS.small.cell);
    const slowDir = projectDir(this.runDir, PROJECTS.slow.path, PROJECTS.slow.cell);
    await placeRepo(large, largeDir);
    await placeRepo(small, smallDir);
    await placeRepo(slow, slowDir);
    for (const d of [largeDir, slowDir]) await warmPageCache(d);

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

    const sshdStart = await this.failures.attempt('starting the OpenSSH server', async () => {
      this.sshd = await startOpenSsh(join(this.runDir, 'sshd'), {
        [PROJECTS.large.path]: largeDir,
        [PROJECTS.small.path]: smallDir,
      });
      log(`OpenSSH server on 127.0.0.1:${this.sshd.port} (pid ${this.sshd.pid})`);
    });
    if (o.profile) {
      await rm(this.profileDir, { recursive: true, force: true });
      await mkdir(this.profileDir, { recursive: true });
    }
    const stackStart = await this.failures.attempt('starting the stack', async () => {
      this.stack = await startBenchStack(this.runDir, { env: this.stackEnv, timeoutMs: 120_000 });
      log(`stack up: router ssh ${this.stack.json.router.ssh}, pids ${JSON.stringify(this.stack.json.pids)}`);
    });
    const floorStart = await this.failures.attempt('starting the gRPC floor server', async () => {
      this.floor = await startGrpcFloor();
    });

    const repoOf: Record<'large' | 'small', ServedRepo> = {
      large: { role: 'large', project: PROJECTS.large.path, dir: largeDir, repo: large },
      small: { role: 'small', project: PROJECTS.small.path, dir: smallDir, repo: small },
    };
    const contenders = this.gitContenders(baseEnv, repoOf, sshdStart, stackStart);
    const ctx: GitWorkloadContext = {
      contenders,
      repos: repoOf,
      scratch,
      opTimeoutMs: o.opTimeoutMs,
      failures: this.failures,
      log,
    };
    await this.warmUp(ctx);
    const ssh = await this.sshAlgorithms();
    if (o.profile && this.stack) {
      // Start the services' profilers now that start-up and warm-up are over (see cpu-profiler.ts).
      for (const pid of Object.values(this.stack.json.pids)) process.kill(pid, 'SIGUSR2');
    }

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
      repos: { large: facts(large), small: facts(small), slow: facts(slow), push: facts(pushSource) },
      failures: this.failures.failures,
      ratios: [],
      targets: [],
      notes: this.notes(slow),
    };
    results.repos.push = { ...facts(pushSource), files: o.pushObjects.files };

    const stackMissing = stackStart.ok ? undefined : `the stack is not running: ${stackStart.error}`;
    if (this.wants('memory')) {
      results.idleMemory = await this.failures.attempt('idle memory and idle tunnels', async () => {
        if (!this.stack) throw new Error(stackMissing);
        log(`memory: idle RSS, then ${o.idleTunnels} idle tunnels`);
        return idleMemory(this.stack, PROJECTS.large.path, o.idleTunnels, log);
      });
    }
    if (this.wants('slow-reader')) {
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
        bridge: await this.failures.attempt('slow reader straight from the bridge', async () => {
          if (!this.stack) throw new Error(stackMissing);
          return slowReadBridge(this.stack, target, o.slowReadRate, timeout);
        }),
        router: await this.failures.attempt('slow reader through the router', async () => {
          if (!this.stack) throw new Error(stackMissing);
          return slowReadRouter(this.stack, target, o.slowReadRate, timeout);
        }),
      };
    }
    if (this.wants('throughput')) results.throughput = await this.throughput(large, stackMissing, floorStart);
    if (this.wants('large-clone')) {
      log(`large clone: ${o.largeCloneRuns} round(s), ${(large.packBytes / MIB).toFixed(0)} MiB pack`);
      results.largeClone = await largeClone(ctx, o.largeCloneRuns);
    }
    if (this.wants('small-clone')) {
      log(`small clones: ${o.sequentialClones} sequential per contender`);
      results.smallClone = await sequentialClones(ctx, o.sequentialClones);
    }
    if (this.wants('concurrency')) {
      results.concurrency = [];
      for (const level of o.concurrency) {
        log(`concurrency: ${level} clones at once`);
        results.concurrency.push({ level, results: await concurrentClones(ctx, level) });
      }
    }
    if (this.wants('push')) {
      log(`push: ${((o.pushObjects.files * o.pushObjects.fileBytes) / MIB).toFixed(0)} MiB of new objects`);
      results.push = await pushes(
        ctx,
        {
          source: pushSource,
          base: small,
          targetDir: smallDir,
          url: (c) => c.url('small'),
        },
        o.pushRuns,
      );
    }
    results.run.loadAverage.end = loadOneMinute();
    return results;
  }

  private gitContenders(
    baseEnv: NodeJS.ProcessEnv,
    repos: Record<'large' | 'small', ServedRepo>,
    sshdStart: Outcome<void>,
    stackStart: Outcome<void>,
  ): GitContender[] {
    const sshd = this.sshd;
    const stack = this.stack;
    const direct: GitContender = {
      id: 'direct',
      url: (role) => `file://${repos[role].dir}`,
      env: baseEnv,
      serverPids: {},
    };
    const openssh: GitContender = sshd
      ? {
          id: 'openssh',
          url: (role) => sshd.url(repos[role].project),
          env: { ...baseEnv, GIT_SSH_COMMAND: sshd.sshCommand },
          serverPids: { sshd: sshd.pid },
        }
      : {
          id: 'openssh',
          unavailable: okValue(sshdStart) ?? errorOf(sshdStart),
          url: () => '',
          env: {},
          serverPids: {},
        };
    let cells: GitContender;
    if (stack) {
      const user = stack.json.users.find((u) => u.username === CELLS_USER);
      cells = user
        ? {
            id: 'cells',
            url: (role) => stack.url(repos[role].project),
            env: { ...baseEnv, GIT_SSH_COMMAND: sshCommandLine(user.privateKey, stack.json.knownHosts) },
            serverPids: {
              router: stack.pid('router'),
              bridge: stack.pid('bridge-cell_us0'),
              gitaly: stack.pid('gitaly-cell_us0'),
              rails: stack.pid('mock-cell'),
            },
          }
        : {
            id: 'cells',
            unavailable: `stack.json has no user ${CELLS_USER}`,
            url: () => '',
            env: {},
            serverPids: {},
          };
    } else {
      cells = { id: 'cells', unavailable: errorOf(stackStart), url: () => '', env: {}, serverPids: {} };
    }
    return [direct, openssh, cells];
  }

  /** One small clone per contender before anything is timed; a contender that fails it is out of the run. */
  private async warmUp(ctx: GitWorkloadContext): Promise<void> {
    for (const c of ctx.contenders) {
      if (c.unavailable) continue;
      const dest = join(ctx.scratch, `warmup-${c.id}`);
      const r = await run('git', ['clone', '-q', '--bare', c.url('small'), dest], {
        env: c.env,
        timeoutMs: 60_000,
      });
      await rm(dest, { recursive: true, force: true });
      if (r.code !== 0) {
        c.unavailable = `warm-up clone failed: ${describeFailure(r)}`;
        this.failures.record(`warm-up, ${CONTENDER_LABELS[c.id]}`, c.unavailable);
      }
    }
  }

  /** What each SSH contender negotiates with the same client (key exchange costs differ a lot). */
  private async sshAlgorithms(): Promise<Partial<Record<'openssh' | 'cells', SshAlgorithms>>> {
    const out: Partial<Record<'openssh' | 'cells', SshAlgorithms>> = {};
    const command = `git-upload-pack '${PROJECTS.small.path}.git'`;
    if (this.sshd) {
      const sshd = this.sshd;
      out.openssh = await negotiatedAlgorithms(sshd.sshCommand, sshd.port, sshd.user, command).catch(
        (err: unknown) => {
          this.failures.record('ssh -v against OpenSSH', err);
          return undefined;
        },
      );
    }
    const stack = this.stack;
    const user = stack?.json.users.find((u) => u.username === CELLS_USER);
    if (stack && user) {
      const line = sshCommandLine(user.privateKey, stack.json.knownHosts);
      out.cells = await negotiatedAlgorithms(line, stack.sshPort, 'git', command).catch((err: unknown) => {
        this.failures.record('ssh -v against the router', err);
        return undefined;
      });
    }
    return out;
  }

  private async throughput(
    large: GeneratedRepo,
    stackMissing: string | undefined,
    floorStart: Outcome<void>,
  ): Promise<Partial<Record<ThroughputId, Outcome<ThroughputResult>>>> {
    const o = this.opts;
    const stack = this.stack;
    const floor = this.floor;
    const big: ThroughputTarget = {
      project: PROJECTS.large.path,
      head: large.head,
      packBytes: large.packBytes,
    };
    const small: ThroughputTarget = { project: PROJECTS.small.path, head: this.smallHead, packBytes: 0 };
    // The floor streams as many bytes as the bridge delivered (the pack size until it did).
    let floorBytes = large.packBytes;
    const gitaly = stack ? this.gitalyDirect(stack) : undefined;
    const unavailable = (what: string) => async (): Promise<ThroughputRun> => {
      throw new Error(what);
    };
    const paths: Array<{
      id: ThroughputId;
      label: string;
      run(t: ThroughputTarget, ms: number): Promise<ThroughputRun>;
    }> = [
      {
        id: 'bridge-h2',
        label: 'bridge-only throughput, HTTP/2',
        run: stack ? (t, ms) => bridgeThroughputRun(stack, 'h2', t, ms) : unavailable(stackMissing ?? ''),
      },
      {
        id: 'bridge-http1',
        label: 'bridge-only throughput, HTTP/1.1',
        run: stack ? (t, ms) => bridgeThroughputRun(stack, 'http1', t, ms) : unavailable(stackMissing ?? ''),
      },
      {
        id: 'gitaly-direct',
        label: 'Gitaly-direct throughput',
        run:
          stack && gitaly
            ? (t, ms) => gitalyThroughputRun(stack, gitaly, t, ms)
            : unavailable(stackMissing ?? ''),
      },
      {
        id: 'grpc-floor',
        label: 'gRPC floor throughput',
        run: floor
          ? (t, ms) => floorThroughputRun(floor, t.packBytes === 0 ? MIB : floorBytes, ms)
          : unavailable(errorOf(floorStart)),
      },
    ];
    const runs = new Map<ThroughputId, ThroughputRun[]>(paths.map((p) => [p.id, []]));
    const failed = new Map<ThroughputId, string>();
    log(`throughput: ${o.throughputRuns} round(s) of ${paths.map((p) => p.id).join(', ')}`);
    try {
      // Untimed warm-up of each path (connections, JIT) with the small repository or 1 MiB.
      for (const p of paths) {
        await p
          .run(small, 60_000)
          .catch((err: unknown) => failed.set(p.id, this.failures.record(`${p.label} (warm-up)`, err)));
      }
      for (let round = 0; round < o.throughputRuns; round++) {
        for (const p of paths) {
          if (failed.has(p.id)) continue;
          try {
            const r = await p.run(big, o.opTimeoutMs);
            runs.get(p.id)?.push(r);
            if (p.id === 'bridge-h2') floorBytes = r.bytes;
            log(`${p.label}: ${r.mibps.toFixed(0)} MiB/s`);
          } catch (err) {
            failed.set(p.id, this.failures.record(p.label, err));
          }
        }
      }
    } finally {
      gitaly?.close();
    }
    const out: Partial<Record<ThroughputId, Outcome<ThroughputResult>>> = {};
    for (const p of paths) {
      const error = failed.get(p.id);
      out[p.id] = error
        ? { ok: false, error }
        : { ok: true, value: summarizeThroughput(runs.get(p.id) ?? []) };
    }
    return out;
  }

  /** A Gitaly client for the cell of the large and small repositories, as the bridge would call it. */
  private gitalyDirect(stack: BenchStack): GitalyDirect | undefined {
    const cell = stack.json.cells.find((c) => c.name === PROJECTS.large.cell);
    if (!cell) return undefined;
    return new GitalyDirect({
      address: cell.gitaly,
      token: readSecretFile(stack.json.secrets.gitaly, 'Gitaly token'),
      storage: 'default',
      repository: (path) => {
        const project = DEMO_PROJECTS.find((p) => `${p.namespace}/${p.path}` === path);
        if (!project) throw new Error(`no demo project ${path}`);
        return { relativePath: hashedRepoPath(project.id), glRepository: `project-${project.id}` };
      },
    });
  }

  private notes(slow: GeneratedRepo): string[] {
    const o = this.opts;
    const notes = [
      'Clones are `git clone --bare` (no checkout), so the transport and index-pack are timed, not writing files.',
      'All git contenders serve the very same bare repositories (the stack’s storage folders); the private sshd runs a forced-command wrapper (`git upload-pack`/`receive-pack`), with `AcceptEnv GIT_PROTOCOL`, `MaxStartups 1000` and `SetEnv SHLVL=1` (so bash does not source the benchmark account’s `~/.bashrc`, which a dedicated git account would not have).',
      `The stack ran with ${Object.entries(this.stackEnv)
        .map(([k, v]) => `\`${k}=${v}\``)
        .join(
          ', ',
        )}: one benchmark user holds up to ${Math.max(...o.concurrency, o.idleTunnels)} tunnels at once.`,
      'Cells-path pushes run Gitaly-style hooks (pre-receive → Rails `/allowed`, post-receive); direct and OpenSSH pushes have no hooks.',
    ];
    if (slow.packBytes < 1024 * MIB) {
      notes.push(
        `The slow-reader repository is ${(slow.packBytes / MIB).toFixed(0)} MiB, smaller than the 1 GiB of the full benchmark.`,
      );
    }
    if (o.mode === 'quick')
      notes.push('Quick mode: a smoke test with small counts; its figures are not measurements.');
    return notes;
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
      summaries.filter((s) => /^(router|bridge-cell_us0|gitaly-cell_us0|mock-cell)$/.test(s.service)),
    );
  }

  get stackPids(): Record<string, number> {
    return this.stack?.json.pids ?? {};
  }
}

function errorOf(o: Outcome<unknown>): string {
  return o.ok ? 'unknown error' : o.error;
}

/**
 * Full runs of every workload write `latest.*` and a dated copy; quick runs `quick-latest.*` and
 * partial runs (`--only`) `partial-latest.*` (both ignored by git), so neither replaces the last full result.
 */
async function writeResults(
  results: BenchResults,
  complete: boolean,
  markdown: string,
  profile: string | undefined,
): Promise<string[]> {
  await mkdir(RESULTS, { recursive: true });
  const json = `${JSON.stringify({ ...results, profile }, null, 2)}\n`;
  const md = `${markdown}${profile ? `\n**CPU profiles** (\`--profile\`)\n\n${profile}` : ''}`;
  const names =
    results.mode === 'quick'
      ? ['quick-latest']
      : complete
        ? ['latest', `${results.run.date.slice(0, 10)}-${results.run.commit.slice(0, 8)}`]
        : ['partial-latest'];
  const written: string[] = [];
  for (const name of names) {
    await writeFile(join(RESULTS, `${name}.json`), json);
    await writeFile(join(RESULTS, `${name}.md`), md);
    written.push(join(RESULTS, `${name}.{json,md}`));
  }
  return written;
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
