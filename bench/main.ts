import { createReadStream, existsSync } from 'node:fs';
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { UploadPackMode } from '../lib/gitaly/index.js';
import { projectRoot } from '../lib/proto.js';
import { hashedRepoPath } from '../lib/repo-path.js';
import { readSecretFile } from '../lib/secrets.js';
import { DEMO_PROJECTS } from '../stack/demo-topology.js';
import { stackPaths } from '../stack/layout.js';
import { TUNNEL_SERVICE_NODE_FLAGS } from '../stack/node-flags.js';
import {
  CONTENDER_LABELS,
  concurrentClones,
  type GitContender,
  type GitContenderId,
  type GitWorkloadContext,
  pushes,
  type RepoRole,
  repeatedClones,
  type ServedRepo,
  type ServerSide,
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
import { type CpuCounter, describeFailure, killTracked, ownCpu, reapedChildrenCpu, run } from './proc.js';
import { renderProfiles, summarizeProfiles } from './profile.js';
import { ensureRepo, type GeneratedRepo, placeRepo } from './repo-gen.js';
import { ratioLines, renderMarkdown } from './report.js';
import type { BenchResults, RepoFacts, ThroughputId } from './results.js';
import { type BenchStack, type ExtraBridge, startBenchStack, startExtraBridge } from './stack-runner.js';
import {
  idleMemory,
  type SlowReaderTarget,
  slowReadBridge,
  slowReadRouter,
  type ThroughputResult,
} from './stack-workloads.js';
import { MIB } from './stats.js';
import { evaluate } from './targets.js';
import { runThroughput } from './throughput.js';

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
  /** The realistic history: a public project of another cell, which bob may clone. */
  history: { path: 'acme.corp/www.site', cell: 'cell_us1' },
} as const;
/** The cells-path user: Maintainer of gitlab-org (clones and pushes a branch). */
const CELLS_USER = 'bob';
/** The benchmark's second bridge of the large repository's cell, in `gitalyUploadPack: "stream"` mode. */
const STREAM_BRIDGE = `bridge-stream-${PROJECTS.large.cell}`;
/** Stack services whose mains preload bench/cpu-profiler.ts under `--profile`. */
const PROFILED = /^(router|router-topology|bridge-.+|gitaly-.+|mock-cell)$/;

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
  private streamBridge: ExtraBridge | undefined;
  private streamBridgeStart: Outcome<void> = { ok: false, error: 'not started' };
  private readonly runDir: string;
  private readonly profileDir: string;
  private readonly stackEnv: Record<string, string>;
  private smallHead = '';

  constructor(private readonly opts: BenchOptions) {
    this.runDir = join(DATA, `run-${opts.mode}`);
    this.profileDir = join(DATA, `profiles-${opts.mode}`);
    // One benchmark user opens up to max(concurrency, idle tunnels) tunnels at once: lift the
    // bridge's per-user cap (default 50) so the workload, not a policy, is measured. The mock
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

  async run(): Promise<BenchResults> {
    const o = this.opts;
    const cache = join(DATA, 'repos');
    log(`mode ${o.mode}; repositories cached in ${cache}`);
    const large = await ensureRepo(cache, o.largeRepo, { log });
    const small = await ensureRepo(cache, o.smallRepo, { log });
    const slow = o.slowRepo === o.largeRepo ? large : await ensureRepo(cache, o.slowRepo, { log });
    const pushSource = await ensureRepo(cache, o.pushObjects, { base: small, branch: 'bench-push', log });
    const history = await ensureRepo(cache, o.historyRepo, { log });
    this.smallHead = small.head;

    await this.removeRunDir();
    await mkdir(this.runDir, { recursive: true });
    const largeDir = projectDir(this.runDir, PROJECTS.large.path, PROJECTS.large.cell);
    const smallDir = projectDir(this.runDir, PROJECTS.small.path, PROJECTS.small.cell);
    const slowDir = projectDir(this.runDir, PROJECTS.slow.path, PROJECTS.slow.cell);
    const historyDir = projectDir(this.runDir, PROJECTS.history.path, PROJECTS.history.cell);
    await placeRepo(large, largeDir);
    await placeRepo(small, smallDir);
    await placeRepo(slow, slowDir);
    await placeRepo(history, historyDir);
    for (const d of [largeDir, slowDir, historyDir]) await warmPageCache(d);

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
        [PROJECTS.history.path]: historyDir,
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
    if (this.stack) await this.startStreamBridge(this.stack);
    const floorStart = await this.failures.attempt('starting the gRPC floor server', async () => {
      this.floor = await startGrpcFloor();
    });

    const repoOf: Record<RepoRole, ServedRepo> = {
      large: { role: 'large', project: PROJECTS.large.path, dir: largeDir, repo: large },
      small: { role: 'small', project: PROJECTS.small.path, dir: smallDir, repo: small },
      history: { role: 'history', project: PROJECTS.history.path, dir: historyDir, repo: history },
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
      // Start the services' profilers now that start-up and warm-up are over (see cpu-profiler.ts);
      // only the services that preload it (SIGUSR2 would end any other, e.g. the Topology Service).
      for (const [name, pid] of Object.entries(this.stackPids))
        if (PROFILED.test(name)) process.kill(pid, 'SIGUSR2');
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
      repos: {
        large: facts(large),
        small: facts(small),
        slow: facts(slow),
        push: facts(pushSource),
        history: { ...facts(history), commits: (o.historyRepo.history?.commits ?? 0) + 1 },
      },
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
    if (this.wants('throughput'))
      results.throughput = await this.throughput(large, stackMissing ?? '', floorStart);
    if (this.wants('large-clone')) {
      log(`large clone: ${o.largeCloneRuns} round(s), ${(large.packBytes / MIB).toFixed(0)} MiB pack`);
      results.largeClone = await repeatedClones(ctx, o.largeCloneRuns, 'large');
    }
    if (this.wants('history-clone')) {
      log(
        `history clone: ${o.largeCloneRuns} round(s), ${(history.packBytes / MIB).toFixed(0)} MiB pack of ${o.historyRepo.history?.commits} commits`,
      );
      results.historyClone = await repeatedClones(ctx, o.largeCloneRuns, 'history');
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
    repos: Record<RepoRole, ServedRepo>,
    sshdStart: Outcome<void>,
    stackStart: Outcome<void>,
  ): GitContender[] {
    const sshd = this.sshd;
    const stack = this.stack;
    const direct: GitContender = {
      id: 'direct',
      url: (role) => `file://${repos[role].dir}`,
      env: baseEnv,
      server: () => ({ cpu: {}, reapers: [] }),
    };
    const openssh: GitContender = sshd
      ? {
          id: 'openssh',
          url: (role) => sshd.url(repos[role].project),
          env: { ...baseEnv, GIT_SSH_COMMAND: sshd.sshCommand },
          server: () => ({ cpu: sshd.serverCpu, reapers: [sshd.pid] }),
        }
      : unavailableContender('openssh', okValue(sshdStart) ?? errorOf(sshdStart));
    let cells: GitContender;
    if (stack) {
      const user = stack.json.users.find((u) => u.username === CELLS_USER);
      cells = user
        ? {
            id: 'cells',
            url: (role) => stack.url(repos[role].project),
            env: { ...baseEnv, GIT_SSH_COMMAND: sshCommandLine(user.privateKey, stack.json.knownHosts) },
            server: (role) =>
              cellsSide(stack, role === 'history' ? PROJECTS.history.cell : PROJECTS.large.cell),
          }
        : unavailableContender('cells', `stack.json has no user ${CELLS_USER}`);
    } else {
      cells = unavailableContender('cells', errorOf(stackStart));
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

  private async throughput(
    large: GeneratedRepo,
    stackMissing: string,
    floorStart: Outcome<void>,
  ): Promise<Partial<Record<ThroughputId, Outcome<ThroughputResult>>>> {
    const stack = this.stack;
    const direct = {
      sidechannel: stack ? this.gitalyDirect(stack, 'sidechannel') : undefined,
      stream: stack ? this.gitalyDirect(stack, 'stream') : undefined,
    };
    try {
      return await runThroughput(
        {
          stack,
          bridges: {
            sidechannel: stack && {
              url: stack.bridgeUrl(PROJECTS.large.cell),
              pid: stack.pid(`bridge-${PROJECTS.large.cell}`),
            },
            stream: this.streamBridge,
          },
          direct,
          floor: this.floor,
          why: {
            stack: stackMissing,
            streamBridge: errorOf(this.streamBridgeStart),
            floor: errorOf(floorStart),
          },
        },
        {
          big: { project: PROJECTS.large.path, head: large.head, packBytes: large.packBytes },
          small: { project: PROJECTS.small.path, head: this.smallHead, packBytes: 0 },
          rounds: this.opts.throughputRuns,
          timeoutMs: this.opts.opTimeoutMs,
          failures: this.failures,
          log,
        },
      );
    } finally {
      direct.sidechannel?.close();
      direct.stream?.close();
    }
  }

  /** The bridge's Gitaly client for the cell of the large and small repositories, without the bridge. */
  private gitalyDirect(stack: BenchStack, mode: UploadPackMode): GitalyDirect | undefined {
    const cell = stack.json.cells.find((c) => c.name === PROJECTS.large.cell);
    if (!cell) return undefined;
    return new GitalyDirect(
      {
        address: `tcp://${cell.gitaly}`,
        token: readSecretFile(stack.json.secrets.gitaly, 'Gitaly token'),
        storage: 'default',
        repository: (path) => {
          const project = DEMO_PROJECTS.find((p) => `${p.namespace}/${p.path}` === path);
          if (!project) throw new Error(`no demo project ${path}`);
          return { relativePath: hashedRepoPath(project.id), glRepository: `project-${project.id}` };
        },
      },
      mode,
    );
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
      `The router and the bridges run as the stack starts them, with \`node ${TUNNEL_SERVICE_NODE_FLAGS.join(' ')}\` (stack/node-flags.ts: V8’s young generation capped; README “Performance”, Memory).`,
      'Cells-path pushes run Gitaly-style hooks (pre-receive → Rails `/allowed`, post-receive); direct and OpenSSH pushes have no hooks.',
      'The bridge talks to Gitaly as current Gitaly requires: upload-pack over `SSHUploadPackWithSidechannel` on the yamux backchannel. The stream-mode rows use the bidi `SSHUploadPack` (Gitaly < 17.8): the mock Gitalys run with `legacyUploadPack` (they keep serving the sidechannel too), and a second bridge process with `gitalyUploadPack: "stream"` runs beside the stack’s, with the same cell config, in front of the same Rails and Gitaly.',
      'CPU by process: each service’s own time (utime+stime of /proc/<pid>/stat); git under mock Gitaly is the time of the children it reaped (cutime+cstime); git under sshd is what the forced command’s shell reports for its git child (`times`), and sshd (own) is the rest of sshd’s process tree (listener, connection processes, the shell).',
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

/** A git contender that could not be started: every workload then fails with `why`. */
function unavailableContender(id: GitContenderId, why: string): GitContender {
  return { id, unavailable: why, url: () => '', env: {}, server: () => ({ cpu: {}, reapers: [] }) };
}

/** The cells path's server side of a cell by process; git's processes (reaped by mock Gitaly) apart. */
function cellsSide(stack: BenchStack, cell: string): ServerSide {
  const gitaly = stack.pid(`gitaly-${cell}`);
  const cpu: Record<string, CpuCounter> = {
    router: ownCpu(stack.pid('router')),
    bridge: ownCpu(stack.pid(`bridge-${cell}`)),
    gitaly: ownCpu(gitaly),
    'gitaly-git': reapedChildrenCpu(gitaly),
    rails: ownCpu(stack.pid('mock-cell')),
  };
  return { cpu, reapers: [gitaly] };
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
