import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../lib/proto.js';
import { EXIT_ADDRESS_IN_USE, findSpareOffset, stackPaths } from '../stack/layout.js';
import { BRIDGE_NODE_FLAGS } from '../stack/node-flags.js';
import { exited, sleep, stopChild, track, waitExit } from './proc.js';

/** The parts of `<data>/stack.json` (written by `npm start`) the benchmark reads. */
export interface StackJson {
  router: { ssh: string; http: string };
  cells: Array<{ id: number; name: string; bridge: string; rails: string; gitaly: string; storage: string }>;
  users: Array<{ username: string; id: number; privateKey: string; publicKey: string }>;
  projects: Array<{ path: string; cell: string; repository: string }>;
  secrets: { shell: string; workhorse: string; gitaly: string };
  knownHosts: string;
  /** The world's journal (NDJSON, one entry per request a service received). */
  journal: string;
  /** The world's control API (`POST /control/…`, bearer token in `tokenFile`). */
  control: { url: string; tokenFile: string };
  pids: Record<string, number>;
}

export interface BenchStack {
  json: StackJson;
  dataDir: string;
  /** ssh://git@127.0.0.1:<port>/<project>.git */
  url(projectPath: string): string;
  sshPort: number;
  /** Process id of a service by its supervisor name (`router`, `bridge-cell_us0`, …). */
  pid(service: string): number;
  bridgeUrl(cellName: string): string;
  stop(): Promise<void>;
}

function runsOurService(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join(projectRoot(), 'dist'));
  } catch {
    return false;
  }
}

/** Whether `pid` runs and its parent is `parent` (from /proc/<pid>/stat). */
function childOf(pid: number, parent: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state !== 'Z' && Number(ppid) === parent;
  } catch {
    return false;
  }
}

/**
 * Starts the whole stack as `npm start` does (`node dist/stack/main.js`) on a data folder the
 * caller has pre-populated with the benchmark repositories, and waits for stack.json, which the
 * stack writes only once each of its services has logged `listening` with the addresses it bound
 * (so the benchmark never measures another process that happens to hold a port). A start that lost
 * a port race (exit EXIT_ADDRESS_IN_USE) is retried with another offset; any other failure is not.
 * `env` adds settings for every service (e.g. `BRIDGE_MAX_TUNNELS_PER_USER`, `NODE_OPTIONS`).
 */
export async function startBenchStack(
  dataDir: string,
  opts: { env: Record<string, string>; timeoutMs: number },
): Promise<BenchStack> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(dataDir, opts);
    if ('stack' in started) return started.stack;
    if (!started.addressInUse || attempt >= 3) throw started.error;
  }
}

/** The started stack: its stack.json, addresses, and `stop` (the supervisor, then any service it left by pid). */
function benchStackOf(json: StackJson, dataDir: string, child: ChildProcess): BenchStack {
  const sshPort = Number(json.router.ssh.split(':')[1]);
  return {
    json,
    dataDir,
    sshPort,
    url: (project) => `ssh://git@127.0.0.1:${sshPort}/${project}.git`,
    pid: (service) => {
      const pid = json.pids[service];
      if (pid === undefined) throw new Error(`stack.json has no pid for ${service}`);
      return pid;
    },
    bridgeUrl: (cellName) => {
      const cell = json.cells.find((c) => c.name === cellName);
      if (!cell) throw new Error(`stack.json has no cell ${cellName}`);
      return cell.bridge;
    },
    stop: async () => {
      child.kill('SIGTERM');
      if (!(await waitExit(child, 30_000))) {
        child.kill('SIGKILL');
        await waitExit(child, 5_000);
      }
      // If the supervisor left a service behind, end it by the pid the stack reported (only if that
      // pid still runs one of our services, never a recycled pid).
      for (const pid of Object.values(json.pids)) {
        if (runsOurService(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  };
}

async function startOnce(
  dataDir: string,
  opts: { env: Record<string, string>; timeoutMs: number },
): Promise<{ stack: BenchStack } | { error: Error; addressInUse: boolean }> {
  const main = join(projectRoot(), 'dist', 'stack', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build`);
  const offset = await findSpareOffset();
  const stackJsonPath = join(dataDir, 'stack.json');
  // One left by an earlier run that was killed must not pass for this stack's.
  rmSync(stackJsonPath, { force: true });
  let output = '';
  const child = track(process.execPath, [main], {
    env: {
      ...process.env,
      STACK_DATA_DIR: dataDir,
      STACK_PORT_OFFSET: String(offset),
      STACK_LOG_LEVEL: 'info',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (c: Buffer) => {
    output = (output + c.toString()).slice(-16_384);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const deadline = Date.now() + opts.timeoutMs;
  while (!existsSync(stackJsonPath)) {
    if (exited(child) || Date.now() > deadline) {
      await stopChild(child, 15_000);
      const error = new Error(
        `the stack did not start (exit ${child.exitCode ?? 'none'}; logs in ${join(dataDir, 'logs')}):\n${output.trim()}`,
      );
      return { error, addressInUse: child.exitCode === EXIT_ADDRESS_IN_USE };
    }
    await sleep(100);
  }
  const json = JSON.parse(readFileSync(stackJsonPath, 'utf8')) as StackJson;
  const strangers = Object.entries(json.pids).filter(([, pid]) => !childOf(pid, child.pid as number));
  if (strangers.length > 0) {
    await stopChild(child, 15_000);
    throw new Error(`stack.json names processes that are not this stack's: ${JSON.stringify(strangers)}`);
  }
  return { stack: benchStackOf(json, dataDir, child) };
}

/** A bridge process the benchmark runs beside the stack's, in front of the same cell. */
export interface ExtraBridge {
  pid: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a second bridge for `cellName` from `dist/bridge/main.js`, with the stack's config of that
 * cell's bridge plus `overrides` (e.g. `gitalyUploadPack: "stream"`), on a port of its own and
 * without a metrics listener or shell endpoint. It asks the same Rails, which names the same Gitaly. Its log goes to
 * `<data>/logs/<name>.log` beside the stack's.
 */
export async function startExtraBridge(
  stack: BenchStack,
  cellName: string,
  name: string,
  opts: { overrides: Record<string, unknown>; env: Record<string, string>; timeoutMs: number },
): Promise<ExtraBridge> {
  const paths = stackPaths(stack.dataDir);
  const base = JSON.parse(readFileSync(join(paths.configDir, `bridge-${cellName}.json`), 'utf8')) as Record<
    string,
    unknown
  >;
  // Its own port only: the cell's bridge already holds the metrics and the shared shell endpoint.
  const { metricsListen: _metrics, shellListen: _shell, ...own } = base;
  const config = { ...own, listen: '127.0.0.1:0', ...opts.overrides };
  const configFile = join(paths.configDir, `${name}.json`);
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  const logFile = join(paths.logDir, `${name}.log`);
  const service = startLoggedService(
    [...BRIDGE_NODE_FLAGS, join(projectRoot(), 'dist', 'bridge', 'main.js'), '--config', configFile],
    { ...process.env, ...opts.env },
    logFile,
  );
  const { child } = service;
  try {
    const url = await listeningUrl(service, opts.timeoutMs);
    if (child.pid === undefined) throw new Error('no pid');
    return { pid: child.pid, url, stop: () => stopChild(child, 15_000) };
  } catch (err) {
    await stopChild(child, 5_000);
    throw new Error(
      `${name} did not start (log in ${join(paths.logDir, `${name}.log`)}): ${(err as Error).message}`,
    );
  }
}

/** The `listen` URL of the bridge's `listening` log line. */
async function listeningUrl(service: LoggedService, timeoutMs: number): Promise<string> {
  const line = await service.listening(timeoutMs);
  if (typeof line.listen !== 'string') throw new Error('the listening line has no listen URL');
  return line.listen;
}

/** A service the benchmark started itself, its output going straight to its log file. */
export interface LoggedService {
  child: ChildProcess;
  /** The fields of its `listening` log line (the addresses it bound), read from the log file. */
  listening(timeoutMs: number): Promise<Record<string, unknown>>;
}

/**
 * Starts a Node service with stdout and stderr on `logFile` itself, not on pipes this process
 * reads: the services log synchronously, so a pipe left full while this process is busy (1000
 * clones spawned, each spawn blocking its event loop) would stop the service.
 */
export function startLoggedService(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
): LoggedService {
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = track(process.execPath, args, { env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  return { child, listening: (timeoutMs) => listeningLineIn(logFile, child, timeoutMs) };
}

async function listeningLineIn(
  logFile: string,
  child: ChildProcess,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = readFileSync(logFile, 'utf8');
    for (const line of text.split('\n')) {
      if (!line.includes('"msg":"listening"')) continue;
      const fields = JSON.parse(line) as Record<string, unknown>;
      // The log file may hold an earlier process's lines (it is appended to).
      if (fields.pid === child.pid) return fields;
    }
    if (exited(child)) throw new Error(`exited (${child.exitCode}): ${text.trim().slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`no listening line within ${timeoutMs} ms`);
    await sleep(50);
  }
}
