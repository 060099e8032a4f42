/**
 * @file `gitlab-cells-ssh up`: runs `dist/stack/main.js` with the world flags, in the foreground
 * (its output is ours, Ctrl-C stops it, its exit code is ours: 78 for a bad topology) or `--detach`ed
 * (its own process group, output to `<data>/logs/stack.log`; returns once stack.json is written).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../lib/proto.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './usage.js';

export interface UpOptions {
  topology?: string;
  dataDir: string;
  portOffset?: string;
  freePorts: boolean;
  detach: boolean;
  /** `--edge KIND|FILE`: the edge between the routers and every cell (README "Edges"). */
  edge?: string;
  /** `--edge-time-scale X`: every time of the edge multiplied by X. */
  edgeTimeScale?: string;
  /** `--tunnel-profile P`: the gitlab-shell release shapes the world's routers emit. */
  tunnelProfile?: string;
}

function stackArgs(o: UpOptions): string[] {
  if (o.portOffset !== undefined && o.freePorts)
    throw new UsageError('--port-offset and --free-ports exclude each other', 'up');
  if (o.portOffset !== undefined && !/^\d+$/.test(o.portOffset))
    throw new UsageError('--port-offset must be a non-negative integer', 'up');
  return [
    join(projectRoot(), 'dist', 'stack', 'main.js'),
    ...(o.topology ? ['--topology', o.topology] : []),
    '--data-dir',
    o.dataDir,
    ...(o.portOffset !== undefined ? ['--port-offset', o.portOffset] : []),
    ...(o.freePorts ? ['--free-ports'] : []),
    ...(o.edge !== undefined ? ['--edge', o.edge] : []),
    ...(o.edgeTimeScale !== undefined ? ['--edge-time-scale', o.edgeTimeScale] : []),
    ...(o.tunnelProfile !== undefined ? ['--tunnel-profile', o.tunnelProfile] : []),
  ];
}

function stackEnv(o: UpOptions): NodeJS.ProcessEnv {
  return {
    ...process.env,
    STACK_DATA_DIR: o.dataDir,
    ...(o.portOffset !== undefined ? { STACK_PORT_OFFSET: o.portOffset } : {}),
  };
}

export async function up(o: UpOptions): Promise<number> {
  const args = stackArgs(o);
  if (!o.detach) {
    const child = spawn(process.execPath, args, { env: stackEnv(o), stdio: 'inherit' });
    // Ctrl-C reaches the stack too (same process group); we only wait for it.
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => child.kill(s));
    return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? EXIT_FAILED)));
  }
  mkdirSync(join(o.dataDir, 'logs'), { recursive: true });
  const logFile = join(o.dataDir, 'logs', 'stack.log');
  const stackJson = join(o.dataDir, 'stack.json');
  rmSync(stackJson, { force: true });
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    env: stackEnv(o),
    stdio: ['ignore', out, out],
    detached: true,
  });
  let exit: number | null = null;
  child.once('exit', (code) => {
    exit = code ?? EXIT_FAILED;
  });
  while (!existsSync(stackJson)) {
    if (exit !== null) {
      process.stderr.write(readFileSync(logFile, 'utf8'));
      return exit;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.unref();
  process.stdout.write(
    `The world is up (stack pid ${child.pid}). stack.json: ${stackJson}\nIts output: ${logFile}\nStop it with: gitlab-cells-ssh down --data-dir ${o.dataDir}\n`,
  );
  return EXIT_OK;
}
