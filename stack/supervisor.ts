import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ControlTarget } from '../lib/contracts/world.js';
import { projectRoot } from '../lib/proto.js';
import { SUPERVISOR_PID_ENV } from '../lib/supervisor-watch.js';
import { boundAddresses, eachLine, type LogLine, parseJson } from './child-output.js';
import { portFree } from './layout.js';
import { nodeFlagsFor } from './node-flags.js';
import { type RestartPlan, RestartPolicy } from './restart-policy.js';
import { AddressInUseError, StartError, StoppingError } from './start-errors.js';

/** One address a service binds, e.g. `{ address: '127.0.0.1:2222', what: 'router SSH' }`. */
export interface ListenAddress {
  /** `host:port` exactly as the service reports it in its `listening` line. */
  address: string;
  /** What it is, for messages. */
  what: string;
}

export interface ServiceSpec {
  /** Unique name, e.g. "bridge-cell_eu0"; also the log file name. */
  name: string;
  /** Folder under dist/ holding main.js, e.g. "bridge". */
  service: string;
  configFile: string;
  /** Every address the service binds; it is ready once its `listening` line reports all of them. */
  listen: ListenAddress[];
  /**
   * The control targets this process answers over its world channel (`lib/contracts/world.ts`):
   * e.g. `[{target: 'gitaly', cell: 'cell_eu0'}]`, one `rails` entry per cell of a mock-cell
   * process. Every process also gets the `world` broadcasts.
   */
  controls?: Array<{ target: ControlTarget; cell?: string }>;
}

/** What the supervisor tells its owner about services that died after they were up. */
export interface SupervisorEvents {
  /** `name` died (exit `code`) and is started again after `plan.delayMs`. */
  restarting(name: string, code: number | null, plan: RestartPlan, logTail: string): void;
  /** `name` is up again as process `pid`. */
  restarted(name: string, pid: number | undefined, attempt: number): void;
  /** `name` died once more after its last attempt: it is not started again. */
  gaveUp(name: string, code: number | null, logTail: string): void;
}

const portOf = (address: string) => address.slice(address.lastIndexOf(':') + 1);

/** How many output lines of a service are kept for messages. */
const TAIL_LINES = 30;

interface Running {
  spec: ServiceSpec;
  child: ChildProcess;
  log: WriteStream;
  logFile: string;
  /** The last lines of stdout and stderr, in arrival order. */
  recent: string[];
  /** The first `listening` line of this child's own stdout. */
  listening: Promise<LogLine>;
  /** Resolves on exit with the code (128 for a signal); the output is complete by then (or after 2 s). */
  exited: Promise<number | null>;
  ready: boolean;
  /** When it became ready (ms since the epoch), 0 before. */
  readyAt: number;
}

/**
 * Starts services as child processes (`node dist/<service>/main.js --config <file>`), each logging
 * to `<logDir>/<name>.log`, and stops them all on request. A service that dies once it was up is
 * started again with backoff (`RestartPolicy`); each restart is written to its log file and told
 * to `events`.
 *
 * A service is ready when the child itself says so: its `listening` log line (JSON on its stdout)
 * reports every address of its spec. Nothing is probed over TCP, so a port that some other process
 * holds never passes for this stack's service.
 */
export class Supervisor {
  private readonly running: Running[] = [];
  private stopping = false;

  constructor(
    private readonly logDir: string,
    private readonly events: SupervisorEvents,
    private readonly policy = new RestartPolicy(),
    /** The world channel's supervisor end (`world-router.ts`): every child is attached to it. */
    private readonly channel?: { attach(spec: ServiceSpec, child: ChildProcess): void },
  ) {}

  /**
   * Starts `specs` at once and resolves when each is ready; rejects with the first failure (an
   * `AddressInUseError` when a port is taken, a `StartError` otherwise, a `StoppingError` when
   * `stop()` was called). On a rejection the caller stops the supervisor; nothing is stopped here.
   */
  async start(specs: ServiceSpec[], timeoutMs = 30_000): Promise<void> {
    if (this.stopping) throw new StoppingError('the stack is stopping');
    const started = specs.map((spec) => this.spawnOne(spec));
    await Promise.all(started.map((r) => this.waitReady(r, timeoutMs)));
  }

  private async waitReady(r: Running, timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      r.listening.then((line) => ({ kind: 'listening' as const, line })),
      r.exited.then((code) => ({ kind: 'exited' as const, code })),
      new Promise<{ kind: 'timeout' }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    const { name } = r.spec;
    if (outcome.kind === 'listening') {
      const bound = boundAddresses(r.spec.service, outcome.line);
      const missing = r.spec.listen.filter((a) => !bound.has(a.address));
      if (missing.length === 0) {
        r.ready = true;
        r.readyAt = Date.now();
        return;
      }
      throw new StartError(
        `${name} logged "listening" without ${missing.map((a) => `${a.address} (${a.what})`).join(', ')}: ${JSON.stringify(outcome.line)}`,
        name,
        r.logFile,
        this.tailOf(r),
      );
    }
    if (this.stopping) throw new StoppingError('the stack is stopping');
    if (outcome.kind === 'timeout') {
      throw new StartError(
        `${name} did not log "listening" within ${Math.round(timeoutMs / 1000)} s`,
        name,
        r.logFile,
        this.tailOf(r),
      );
    }
    const taken = await this.addressInUse(r);
    if (taken) throw new AddressInUseError(name, taken, r.logFile, this.tailOf(r));
    throw new StartError(
      `${name} exited (code ${outcome.code}) before it was listening`,
      name,
      r.logFile,
      this.tailOf(r),
    );
  }

  /**
   * Which address of a service that exited before listening was taken, if that is why: its output
   * says EADDRINUSE (every service reports the error of `listen`). The address is the one named
   * there; if none of the spec's is, the one that cannot be bound now that the service is gone.
   */
  private async addressInUse(r: Running): Promise<ListenAddress | undefined> {
    const lines = r.recent.filter((l) => l.includes('EADDRINUSE'));
    if (lines.length === 0) return undefined;
    const named = /EADDRINUSE\S*\s+address already in use\s+(\S+:\d+)/.exec(lines.join('\n'))?.[1];
    const byPort = r.spec.listen.find((a) => named !== undefined && portOf(a.address) === portOf(named));
    if (byPort) return byPort;
    for (const a of r.spec.listen) if (!(await portFree(Number(portOf(a.address))))) return a;
    return r.spec.listen[0] ?? { address: named ?? '(unknown)', what: 'an address of the service' };
  }

  private tailOf(r: Running): string {
    return r.recent.length > 0 ? r.recent.join('\n') : '(no output)';
  }

  private spawnOne(spec: ServiceSpec): Running {
    const logFile = join(this.logDir, `${spec.name}.log`);
    const log = createWriteStream(logFile, { flags: 'a' });
    const main = join(projectRoot(), 'dist', spec.service, 'main.js');
    const args = [...nodeFlagsFor(spec.service), main, '--config', spec.configFile];
    const child = spawn(process.execPath, args, {
      // fd 3 is the world channel (journal entries, control requests: lib/contracts/world.ts).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Each service ends itself when this process is gone (lib/supervisor-watch.ts), even after a SIGKILL.
      env: { ...process.env, [SUPERVISOR_PID_ENV]: String(process.pid) },
    });
    this.channel?.attach(spec, child);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const recent: string[] = [];
    const remember = (line: string) => {
      recent.push(line);
      if (recent.length > TAIL_LINES) recent.shift();
    };
    let onListening: (line: LogLine) => void = () => undefined;
    const listening = new Promise<LogLine>((resolve) => {
      onListening = resolve;
    });
    // The child's own stdout: nobody else can write a `listening` line into this pipe.
    eachLine(child.stdout, (line) => {
      remember(line);
      const entry = parseJson(line);
      if (entry?.msg === 'listening' && (entry.pid === undefined || entry.pid === child.pid))
        onListening(entry);
    });
    eachLine(child.stderr, remember);
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const r: Running = {
      spec,
      child,
      log,
      logFile,
      recent,
      listening,
      exited: Promise.resolve(null),
      ready: false,
      readyAt: 0,
    };
    r.exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code, signal) => {
        // 'close' comes once stdout and stderr are drained; a grandchild holding them open is not waited for.
        void Promise.race([closed, new Promise((t) => setTimeout(t, 2_000))]).then(() => {
          resolve(code ?? (signal ? 128 : null));
          // An exit before `listening` is reported by start() or restart(), not here.
          if (!this.stopping && r.ready) void this.restart(r, code ?? (signal ? 128 : null));
        });
      });
    });
    const at = this.running.findIndex((old) => old.spec.name === spec.name);
    if (at >= 0) this.running.splice(at, 1, r)[0]?.log.end();
    else this.running.push(r);
    return r;
  }

  /** Starts `dead`'s service again after the policy's delay, until it is up or given up. */
  private async restart(dead: Running, exitCode: number | null): Promise<void> {
    const { name } = dead.spec;
    let code = exitCode;
    let upMs = Date.now() - dead.readyAt;
    let tail = this.tailOf(dead);
    for (;;) {
      const plan = this.policy.onDeath(name, upMs);
      if (!plan) {
        this.note(dead, 'supervisor gave up the service', { exit_code: code });
        this.events.gaveUp(name, code, tail);
        return;
      }
      const { attempt, delayMs: delay_ms } = plan;
      this.note(dead, 'supervisor restarting the service', { exit_code: code, attempt, delay_ms });
      this.events.restarting(name, code, plan, tail);
      await new Promise((resolve) => setTimeout(resolve, plan.delayMs));
      if (this.stopping) return;
      const next = this.spawnOne(dead.spec);
      try {
        await this.waitReady(next, 30_000);
        this.events.restarted(name, next.child.pid, plan.attempt);
        return;
      } catch {
        if (this.stopping) return;
        next.child.kill('SIGKILL');
        code = await next.exited;
        upMs = 0;
        tail = this.tailOf(next);
      }
    }
  }

  /** A supervisor line in the service's own log file, shaped like the services' pino lines. */
  private note(r: Running, msg: string, fields: Record<string, unknown>): void {
    const line = { level: 40, time: Date.now(), name: 'supervisor', service: r.spec.name, ...fields, msg };
    // The log of the service's current process (a restart opens it again).
    this.running.find((x) => x.spec.name === r.spec.name)?.log.write(`${JSON.stringify(line)}\n`);
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
