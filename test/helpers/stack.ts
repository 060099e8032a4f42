import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StackJson } from '../../lib/contracts/stack.js';
import { schemaValidator } from '../../lib/json-schema.js';
import { projectRoot } from '../../lib/proto.js';
import { EXIT_ADDRESS_IN_USE, findSpareOffset, stackPorts } from '../../stack/layout.js';
import { listProcesses } from './procs.js';

export interface RunningStack {
  json: StackJson;
  dataDir: string;
  /** A HOME for git and ssh with no user configuration. */
  home: string;
  /** The STACK_PORT_OFFSET it runs with. */
  portOffset: number;
  sshPort: number;
  /** The ssh command line git should use to act as `username`. */
  sshCommand(username: string): string;
  /** Environment for running git as `username` through the router. */
  gitEnv(username: string): NodeJS.ProcessEnv;
  /** ssh://git@127.0.0.1:<port>/<path>.git */
  url(projectPath: string): string;
  project(path: string): StackJson['projects'][number];
  /** SIGTERM to the stack's main process, as Ctrl-C would; resolves with its exit code. */
  terminate(): Promise<number | null>;
  /** terminate(), then kill anything left in the stack's process group and remove its data. */
  stop(): Promise<void>;
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Process groups of stacks started by this test process and not yet stopped. */
const liveGroups = new Set<number>();

/** SIGKILL to every process of the group `pgid` (a stack started by `spawnStack`). */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
  liveGroups.delete(pgid);
}

// A test worker that dies mid-test must not leave a stack running.
process.once('exit', () => {
  for (const pgid of liveGroups) killGroup(pgid);
});

/** `node dist/stack/main.js` as `npm start` runs it, in its own process group. */
export interface StackProcess {
  child: ChildProcess;
  /** The stack's process group (= the pid of its main process). */
  pgid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited and its output is read to the end. */
  closed: Promise<number | null>;
}

/**
 * Reads `<dataDir>/stack.json` and checks it against `schemas/stack.schema.json`: a stack.json the
 * stack writes that does not conform fails the test that reads it.
 */
export function readStackJson(file: string): StackJson {
  const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const problems = schemaValidator('stack')(json);
  if (problems.length > 0) throw new Error(`${file} does not conform to its schema:\n${problems.join('\n')}`);
  return json as StackJson;
}

/**
 * Spawns the stack's main process on `dataDir` with port offset `offset` (none: `args` chooses, e.g.
 * `--free-ports`) and the command-line `args`, detached in its own process group (ended by
 * `killGroup(pgid)`, when this test process exits, or by the stack itself once this process is gone).
 */
export function spawnStack(opts: {
  dataDir: string;
  offset?: number;
  args?: string[];
  logLevel?: string;
  env?: Record<string, string>;
}): StackProcess {
  const child = spawn(
    process.execPath,
    [join(projectRoot(), 'dist', 'stack', 'main.js'), ...(opts.args ?? [])],
    {
      env: {
        ...process.env,
        ...opts.env,
        STACK_DATA_DIR: opts.dataDir,
        ...(opts.offset === undefined ? {} : { STACK_PORT_OFFSET: String(opts.offset) }),
        STACK_LOG_LEVEL: opts.logLevel ?? 'info',
        // The stack ends itself when this test process is gone, even after a SIGKILL of the worker.
        WORLD_PARENT_PID: String(process.pid),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  const pgid = child.pid as number;
  liveGroups.add(pgid);
  const out: string[] = [];
  const err: string[] = [];
  child.stdout?.on('data', (c: Buffer) => out.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => err.push(c.toString()));
  const closed = new Promise<number | null>((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : null)));
  });
  return { child, pgid, stdout: () => out.join(''), stderr: () => err.join(''), closed };
}

/** A start that failed; `addressInUse` when the stack reported one of its ports taken (EADDRINUSE). */
export class StackStartError extends Error {
  /** How many starts were tried (set by `startStack`). */
  attempts = 1;
  constructor(
    message: string,
    readonly addressInUse: boolean,
    readonly offset: number,
  ) {
    super(message);
  }
}

export interface StartStackOptions {
  logLevel?: string;
  /** Extra environment of the stack's main process and so of every service (e.g. `BRIDGE_*` settings). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** The port offset of each attempt; default: a random one whose ports are all free now. */
  pickOffset?: (attempt: number) => Promise<number>;
}

/**
 * Starts the whole stack exactly as `npm start` does (`node dist/stack/main.js`), in a fresh data
 * folder with its own port offset, and waits for stack.json, which the stack writes only once every
 * one of its services has logged `listening` with the addresses it bound. The stack runs in its own
 * process group, so whatever happens every process of it can be ended. A start that lost a port
 * race (another process took one of its ports between the check and the bind: the stack exits with
 * EXIT_ADDRESS_IN_USE) is retried with another offset; any other failure is not.
 */
export async function startStack(opts: StartStackOptions = {}): Promise<RunningStack> {
  const pickOffset = opts.pickOffset ?? (() => findSpareOffset());
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(await pickOffset(attempt), opts);
    } catch (err) {
      if (err instanceof StackStartError) err.attempts = attempt;
      if (!(err instanceof StackStartError && err.addressInUse) || attempt >= 3) throw err;
    }
  }
}

async function startStackOnce(offset: number, opts: StartStackOptions): Promise<RunningStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cells-stack-'));
  const home = join(dataDir, 'home');
  const proc = spawnStack({ dataDir, offset, logLevel: opts.logLevel, env: opts.env });
  const { child, pgid } = proc;
  const stackJsonPath = join(dataDir, 'stack.json');
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  const fail = async (why: string, addressInUse = false): Promise<never> => {
    killGroup(pgid);
    await Promise.race([proc.closed, new Promise((r) => setTimeout(r, 2_000))]);
    await rm(dataDir, { recursive: true, force: true });
    throw new StackStartError(
      `stack did not start (${why}):\n${proc.stdout()}${proc.stderr()}`,
      addressInUse,
      offset,
    );
  };
  while (!existsSync(stackJsonPath)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await fail(`exit ${child.exitCode ?? child.signalCode}`, child.exitCode === EXIT_ADDRESS_IN_USE);
    }
    if (Date.now() > deadline) await fail('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
  const json = readStackJson(stackJsonPath);
  const sshPort = Number(json.router.ssh.split(':')[1]);
  // Every service named in stack.json must be a running child of this stack's main process.
  const procs = listProcesses();
  const strangers = Object.entries(json.pids).filter(
    ([, pid]) => !procs.some((p) => p.pid === pid && p.ppid === child.pid && p.state !== 'Z'),
  );
  if (sshPort !== stackPorts(offset).routerSsh || strangers.length > 0) {
    await fail(`stack.json does not describe this stack: ${JSON.stringify({ offset, sshPort, strangers })}`);
  }
  mkdirSync(home, { recursive: true });

  const sshCommand = (username: string) => {
    const user = json.users.find((u) => u.username === username);
    if (!user) throw new Error(`no demo user ${username}`);
    return [
      'ssh -F /dev/null',
      `-i ${user.privateKey}`,
      '-o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR',
      `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${json.knownHosts}`,
    ].join(' ');
  };
  return {
    json,
    dataDir,
    home,
    portOffset: offset,
    sshPort,
    sshCommand,
    gitEnv: (username) => ({
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_SSH_COMMAND: sshCommand(username),
      GIT_TERMINAL_PROMPT: '0',
      LANG: 'C',
    }),
    url: (projectPath) => `ssh://git@127.0.0.1:${sshPort}/${projectPath}.git`,
    project: (path) => {
      const p = json.projects.find((x) => x.path === path);
      if (!p) throw new Error(`no demo project ${path}`);
      return p;
    },
    terminate: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await waitForExit(child, 30_000);
      return child.exitCode;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await waitForExit(child, 30_000);
      // The stack stops its services on SIGTERM; anything still in its group is killed.
      killGroup(pgid);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
