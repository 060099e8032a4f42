import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../lib/proto.js';
import { SUPERVISOR_PID_ENV } from '../lib/supervisor-watch.js';

export interface ServiceSpec {
  /** Unique name, e.g. "bridge-cell_eu0"; also the log file name. */
  name: string;
  /** Folder under dist/ holding main.js, e.g. "bridge". */
  service: string;
  configFile: string;
  /** TCP ports that answer once the service is ready. */
  ports: number[];
}

interface Running {
  spec: ServiceSpec;
  child: ChildProcess;
  log: WriteStream;
  logFile: string;
  exited: Promise<number | null>;
}

async function waitForPort(
  host: string,
  port: number,
  deadline: number,
  alive: () => boolean,
): Promise<void> {
  while (Date.now() < deadline) {
    if (!alive()) throw new Error('process exited');
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host, port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} did not open in time`);
}

async function tail(file: string, lines = 20): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts services as child processes (`node dist/<service>/main.js --config <file>`), each logging
 * to `<logDir>/<name>.log`, and stops them all on request or when one of them dies.
 */
export class Supervisor {
  private readonly running: Running[] = [];
  private stopping = false;

  constructor(
    private readonly logDir: string,
    private readonly host: string,
    private readonly onUnexpectedExit: (name: string, code: number | null, logTail: string) => void,
  ) {}

  async start(specs: ServiceSpec[], timeoutMs = 30_000): Promise<void> {
    const started = specs.map((spec) => this.spawnOne(spec));
    const deadline = Date.now() + timeoutMs;
    await Promise.all(
      started.map(async (r) => {
        let alive = true;
        void r.exited.then(() => {
          alive = false;
        });
        try {
          for (const port of r.spec.ports) await waitForPort(this.host, port, deadline, () => alive);
        } catch (err) {
          throw new Error(
            `${r.spec.name} did not become ready (${(err as Error).message}); last log lines of ${r.logFile}:\n${await tail(r.logFile)}`,
          );
        }
      }),
    );
  }

  private spawnOne(spec: ServiceSpec): Running {
    const logFile = join(this.logDir, `${spec.name}.log`);
    const log = createWriteStream(logFile, { flags: 'a' });
    const main = join(projectRoot(), 'dist', spec.service, 'main.js');
    const child = spawn(process.execPath, [main, '--config', spec.configFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Each service ends itself when this process is gone (lib/supervisor-watch.ts), even after a SIGKILL.
      env: { ...process.env, [SUPERVISOR_PID_ENV]: String(process.pid) },
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve(code ?? (signal ? 128 : null));
        if (!this.stopping) {
          void tail(logFile).then((t) => this.onUnexpectedExit(spec.name, code, t));
        }
      });
    });
    const r: Running = { spec, child, log, logFile, exited };
    this.running.push(r);
    return r;
  }

  get pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.running.map((r) => [r.spec.name, r.child.pid]));
  }

  /** SIGTERM to every service (router first, Gitaly last), SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const order = [...this.running].reverse();
    for (const r of order) {
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
      const timer = setTimeout(() => r.child.kill('SIGKILL'), graceMs);
      await r.exited;
      clearTimeout(timer);
      r.log.end();
    }
  }
}
