import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureRepo, type GeneratedRepo, placeRepo } from '../../bench/repo-gen.js';
import { projectRoot } from '../../lib/proto.js';
import { waitUntil } from '../helpers/poll.js';
import { descendants, isAlive, listProcesses, type Proc } from '../helpers/procs.js';
import { runOk } from '../helpers/run.js';
import { type RunningStack, readStackJson, startStack } from '../helpers/stack.js';

/** The timeouts the matrix's stack runs with, short enough for a stalled client to hit them. */
export const TIMEOUTS = { tunnelIdleMs: 5_000, internalApiMs: 3_000, preauthMs: 3_000, topologyMs: 1_000 };

/** How many repeats, how large the repository, which rows and columns: `FAULTS_*` variables. */
export const settings = {
  repeats: Number(process.env.FAULTS_REPEATS ?? 5),
  /** Repeats of the faults in place before the operation starts (no offset to vary); default `repeats`. */
  beforeRepeats: Number(process.env.FAULTS_BEFORE_REPEATS ?? process.env.FAULTS_REPEATS ?? 5),
  repoMiB: Number(process.env.FAULTS_REPO_MIB ?? 200),
  only: process.env.FAULTS_ONLY ? new RegExp(process.env.FAULTS_ONLY) : undefined,
  rows: process.env.FAULTS_ROWS ? new RegExp(process.env.FAULTS_ROWS) : undefined,
  seed: Number(process.env.FAULTS_SEED ?? Date.now() % 1_000_000),
  /** The router's tunnel leg to the cells (`ROUTER_CELL_PROTOCOL`): `http1` (its default) or `h2c`. */
  cellProtocol: process.env.FAULTS_CELL_PROTOCOL === 'h2c' ? 'h2c' : 'http1',
};

/** The served project (cell_us0, the legacy cell), the push target and the user who may do both. */
export const LARGE_PROJECT = 'gitlab-org/gitlab';
export const PUSH_PROJECT = 'gitlab-org/gitlab-test';
export const USER = 'bob';
export const CELL = 'cell_us0';

/** A Rails fault rule of `rails-faults.mjs`. */
export interface RailsRule {
  path: string;
  mode: 'down' | 'slow' | '500';
  delayMs?: number;
}

/** A running git command in its own process group (git and its ssh child end together). */
export interface GitRun {
  child: ChildProcess;
  pgid: number;
  started: number;
  stderr(): string;
  /** Exit code (128 + n for a signal) and the time it exited. */
  exited: Promise<{ code: number; at: number }>;
}

/** The stack of the fault matrix, its large repository and the means to inject faults into it. */
export class FaultWorld {
  readonly work: string;
  private readonly control: string;

  private constructor(
    readonly stack: RunningStack,
    readonly large: GeneratedRepo,
    work: string,
    control: string,
  ) {
    this.work = work;
    this.control = control;
  }

  static async start(): Promise<FaultWorld> {
    const work = mkdtempSync(join(tmpdir(), 'faults-'));
    const control = join(work, 'rails-faults.json');
    writeFileSync(control, '{"rules":[]}\n');
    const cache = join(projectRoot(), 'bench', 'data', 'repos');
    const mib = settings.repoMiB;
    const large = await ensureRepo(cache, {
      name: 'faults',
      seed: `faults-${mib}`,
      files: mib,
      fileBytes: 1024 * 1024,
      filesPerCommit: 8,
      text: false,
    });
    const preload = pathToFileURL(join(projectRoot(), 'test', 'faults', 'rails-faults.mjs')).href;
    const stack = await startStack({
      env: {
        // No Geo secondary: its replication fetch after every push would be a server-side git process
        // of another site that the matrix's leftover-process check cannot tell from the operation's own.
        STACK_GEO: 'off',
        // The kill faults end the same service every ~20 s, 25 times in a row: with the default 30 s
        // a service counts as crash-looping after 8 of them and the supervisor gives it up.
        STACK_RESTART_STABLE_MS: '5000',
        NODE_OPTIONS: `--import=${preload}`,
        FAULTS_CONTROL: control,
        BRIDGE_TUNNEL_IDLE_TIMEOUT_MS: String(TIMEOUTS.tunnelIdleMs),
        BRIDGE_PREAUTH_TIMEOUT_MS: String(TIMEOUTS.preauthMs),
        ROUTER_INTERNAL_API_TIMEOUT_MS: String(TIMEOUTS.internalApiMs),
        ROUTER_TOPOLOGY_TIMEOUT_MS: String(TIMEOUTS.topologyMs),
        ROUTER_CELL_PROTOCOL: settings.cellProtocol,
      },
    });
    const world = new FaultWorld(stack, large, work, control);
    await placeRepo(large, world.repository(LARGE_PROJECT));
    // The pusher's own copy (hard links): its `main` is the large history, unknown to PUSH_PROJECT.
    await runOk('git', ['clone', '-q', '--bare', '--local', large.dir, join(work, 'pusher.git')]);
    mkdirSync(join(work, 'runs'), { recursive: true });
    return world;
  }

  async stop(): Promise<void> {
    await this.stack.stop();
    await rm(this.work, { recursive: true, force: true });
  }

  repository(projectPath: string): string {
    return this.stack.project(projectPath).repository;
  }

  /** stack.json as it is now (the supervisor rewrites its pids after a restart). */
  pids(): Record<string, number> {
    return readStackJson(join(this.stack.dataDir, 'stack.json')).pids;
  }

  pid(service: string): number {
    const pid = this.pids()[service];
    if (pid === undefined) throw new Error(`no service ${service} in stack.json`);
    return pid;
  }

  /** Waits until `service` runs as a process other than `old` (the supervisor restarted it). */
  async restarted(service: string, old: number, ms = 30_000): Promise<void> {
    await waitUntil(
      () => {
        const pid = this.pids()[service];
        return pid !== undefined && pid !== old && isAlive(pid);
      },
      ms,
      `${service} to be restarted`,
      50,
    );
  }

  setRails(rules: RailsRule[]): void {
    writeFileSync(`${this.control}.tmp`, JSON.stringify({ rules }));
    renameSync(`${this.control}.tmp`, this.control);
  }

  /**
   * The server side's processes that are not services: git and anything else started for an
   * operation (their command lines name the stack's data folder), live, zombies left out. The
   * client's own process group (`clientPgid`: git and its ssh, whose key is in the data folder) is not
   * the server side.
   */
  leftovers(clientPgid?: number): Proc[] {
    const procs = listProcesses();
    // Services by their command line too: a restarted one is not in stack.json until it is ready.
    const services = new Set([
      ...Object.values(this.pids()),
      ...procs
        .filter((p) => SERVICE_CMDLINE.test(p.cmdline) && p.cmdline.includes(this.stack.dataDir))
        .map((p) => p.pid),
    ]);
    const children = new Set([...services].flatMap((pid) => descendants(pid, procs)).map((p) => p.pid));
    return procs.filter(
      (p) =>
        p.state !== 'Z' &&
        p.pgid !== clientPgid &&
        !services.has(p.pid) &&
        (children.has(p.pid) || p.cmdline.includes(this.stack.dataDir)),
    );
  }

  /** Spawns git (as USER, through the router unless `env` says otherwise), detached. */
  git(args: string[], opts: { cwd?: string; stdoutFile?: string; env?: NodeJS.ProcessEnv } = {}): GitRun {
    const out = opts.stdoutFile ? openSync(opts.stdoutFile, 'w') : 'ignore';
    const child = spawn('git', args, {
      cwd: opts.cwd ?? this.work,
      env: opts.env ?? this.stack.gitEnv(USER),
      stdio: ['ignore', out, 'pipe'],
      detached: true,
    });
    if (typeof out === 'number') closeSync(out);
    const started = Date.now();
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-8192);
    });
    const exited = new Promise<{ code: number; at: number }>((resolve) => {
      child.once('close', (code, signal) =>
        resolve({ code: code ?? (signal ? 128 + signalNumber(signal) : -1), at: Date.now() }),
      );
    });
    return { child, pgid: child.pid as number, started, stderr: () => stderr, exited };
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : signal === 'SIGPIPE' ? 13 : 0;
}

/** `node …/dist/<service>/main.js --config <data>/config/…`: a service process of a stack. */
const SERVICE_CMDLINE = /\/dist\/[a-z-]+\/main\.js --config /;

/** Sends `signal` to a process group; false when it is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
