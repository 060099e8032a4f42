import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../lib/proto.js';
import { findFreeOffset } from '../../stack/layout.js';

export interface StackJson {
  router: { ssh: string; http: string };
  cells: Array<{
    id: number;
    name: string;
    legacy: boolean;
    bridge: string;
    rails: string;
    gitaly: string;
    storage: string;
    metrics: string;
  }>;
  users: Array<{ username: string; id: number; privateKey: string; publicKey: string }>;
  projects: Array<{ path: string; cell: string; visibility: string; repository: string }>;
  secrets: { shell: string; workhorse: string; gitaly: string };
  routerMetrics: string;
  knownHosts: string;
  pids: Record<string, number>;
}

export interface RunningStack {
  json: StackJson;
  dataDir: string;
  /** A HOME for git and ssh with no user configuration. */
  home: string;
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

function killGroup(pgid: number): void {
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

/**
 * Starts the whole stack exactly as `npm start` does (`node dist/stack/main.js`), in a fresh data
 * folder with its own port offset, and waits for stack.json. The stack runs in its own process
 * group, so whatever happens every process of it can be ended. A start that fails (e.g. a port
 * taken between the check and the bind by a parallel test) is retried with another offset.
 */
export async function startStack(
  opts: { logLevel?: string; timeoutMs?: number } = {},
): Promise<RunningStack> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startStackOnce(opts);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function startStackOnce(opts: { logLevel?: string; timeoutMs?: number }): Promise<RunningStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cells-stack-'));
  const home = join(dataDir, 'home');
  const offset = await findFreeOffset(10_000, 400);
  const output: string[] = [];
  const child = spawn(process.execPath, [join(projectRoot(), 'dist', 'stack', 'main.js')], {
    env: {
      ...process.env,
      STACK_DATA_DIR: dataDir,
      STACK_PORT_OFFSET: String(offset),
      STACK_LOG_LEVEL: opts.logLevel ?? 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pgid = child.pid as number;
  liveGroups.add(pgid);
  child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  const stackJsonPath = join(dataDir, 'stack.json');
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  while (!existsSync(stackJsonPath)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      killGroup(pgid);
      await rm(dataDir, { recursive: true, force: true });
      throw new Error(`stack did not start (exit ${child.exitCode}):\n${output.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const json = JSON.parse(readFileSync(stackJsonPath, 'utf8')) as StackJson;
  const sshPort = Number(json.router.ssh.split(':')[1]);
  const { mkdirSync } = await import('node:fs');
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
