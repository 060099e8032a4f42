import { type ChildProcess, type SpawnOptions, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Every child the benchmark starts, so an interrupted run can still end them (by pid, nothing else). */
const children = new Set<ChildProcess>();

/** Spawns a child and remembers it until it exits. */
export function track(cmd: string, args: readonly string[], opts: SpawnOptions): ChildProcess {
  const child = spawn(cmd, args, opts);
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', () => children.delete(child));
  return child;
}

/** SIGKILLs every child still running (used when the benchmark is interrupted or fails). */
export function killTracked(): number {
  let n = 0;
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      child.kill('SIGKILL');
      n++;
    }
  }
  return n;
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves true when the child exits within `ms`, false otherwise. */
export function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (exited(child)) return;
  child.kill('SIGTERM');
  if (!(await waitExit(child, graceMs))) {
    child.kill('SIGKILL');
    await waitExit(child, 5_000);
  }
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stdout: string;
  /** The last 16 KiB of standard error. */
  stderr: string;
  timedOut: boolean;
}

const KEEP = 16 * 1024;

/** Runs a command to completion (killed after `timeoutMs`), timing it from spawn to exit. */
export function run(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number; keepStdout?: boolean },
): Promise<RunResult> {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = track(cmd, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      if (opts.keepStdout) stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-KEEP);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, ms: 0, stdout, stderr: `${stderr}${err.message}`, timedOut });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ code, signal, ms, stdout, stderr, timedOut });
    });
  });
}

/** Like `run`, but throws with the command's stderr when it does not exit 0. */
export async function mustRun(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number; keepStdout?: boolean },
): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${describeFailure(r)}`);
  return r;
}

/** `why`, then the last lines of a command's standard error (enough for gitlab-shell's error box). */
export function failureText(why: string, stderr: string): string {
  const tail = stderr.trim().split('\n').slice(-14).join(' | ');
  return tail ? `${why}: ${tail}` : why;
}

export function describeFailure(r: RunResult): string {
  return failureText(
    r.timedOut ? 'timed out' : r.signal ? `killed by ${r.signal}` : `exit ${r.code}`,
    r.stderr,
  );
}

/** Output of a short command (stdout, or stderr when stdout is empty), or undefined when it cannot run. */
export function commandOutput(cmd: string, args: readonly string[]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  if (r.error) return undefined;
  return r.stdout.trim() || r.stderr.trim() || undefined;
}

/** Resident set size of a process in KiB (VmRSS), or undefined when it is gone. */
export function rssKiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  ticksPerSecond ??= Number(commandOutput('getconf', ['CLK_TCK']) ?? '100') || 100;
  return ticksPerSecond;
}

/** CPU seconds of a process itself (utime+stime) and of its children it waited for (cutime+cstime). */
export interface ProcessCpu {
  own: number;
  children: number;
}

export function processCpu(pid: number): ProcessCpu | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime, stime, cutime, cstime are fields 14..17.
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i] ?? 0) / clockTicks());
    return { own: (utime ?? 0) + (stime ?? 0), children: (cutime ?? 0) + (cstime ?? 0) };
  } catch {
    return undefined;
  }
}

/** Cumulative CPU seconds of something, read when a measurement starts and ends; undefined once it is gone. */
export type CpuCounter = () => number | undefined;

/** A process's own CPU time. */
export const ownCpu =
  (pid: number): CpuCounter =>
  () =>
    processCpu(pid)?.own;

/**
 * CPU time of the children a process has reaped, and of theirs (each level waits for its own):
 * git upload-pack and pack-objects under mock Gitaly. A child's time arrives only once it is reaped.
 */
export const reapedChildrenCpu =
  (pid: number): CpuCounter =>
  () =>
    processCpu(pid)?.children;

/** A process's own CPU time plus that of every descendant it has reaped. */
export const treeCpu =
  (pid: number): CpuCounter =>
  () => {
    const cpu = processCpu(pid);
    return cpu && cpu.own + cpu.children;
  };

/** Busy CPU seconds of the whole machine so far (all cores; idle and iowait excluded). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return (total - idle) / clockTicks();
}

/** Direct children of a process (from /proc/<pid>/task/<tid>/children). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // process gone
  }
  return out;
}

/** Samples the RSS of some processes every `intervalMs` until stopped; keeps the peak of each. */
export class RssSampler {
  private readonly peaks = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: Readonly<Record<string, number>>,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const kib = rssKiB(pid);
      if (kib !== undefined) this.peaks.set(name, Math.max(kib, this.peaks.get(name) ?? 0));
    }
  }

  /** Stops sampling; returns the peak RSS (KiB) of each process seen. */
  stop(): Record<string, number> {
    clearInterval(this.timer);
    this.sample();
    return Object.fromEntries(this.peaks);
  }
}

/** CPU seconds of the whole machine and of each counter between a meter's start and stop. */
export interface CpuUse {
  /** Busy CPU seconds of the whole machine (client, server, everything). */
  machine: number;
  processes: Record<string, number>;
}

/**
 * CPU seconds used by named counters and by the whole machine between construction and `stop`.
 * `reapers` are processes whose children's CPU is counted: `stopReaped` first waits until they have
 * reaped every child started during the measurement (an sshd connection process may outlive the client).
 */
export class CpuMeter {
  private readonly before: Map<string, number>;
  private readonly machineBefore = machineBusySeconds();
  private readonly childrenBefore: Map<number, number>;

  constructor(
    private readonly counters: Readonly<Record<string, CpuCounter>>,
    private readonly reapers: readonly number[] = [],
  ) {
    this.before = new Map(Object.entries(counters).map(([n, read]) => [n, read() ?? 0]));
    this.childrenBefore = new Map(reapers.map((pid) => [pid, childPids(pid).length]));
  }

  stop(): CpuUse {
    const processes: Record<string, number> = {};
    for (const [name, read] of Object.entries(this.counters)) {
      const now = read();
      if (now !== undefined) processes[name] = round(now - (this.before.get(name) ?? 0), 2);
    }
    return { machine: round(machineBusySeconds() - this.machineBefore, 2), processes };
  }

  /** `stop` once the reapers are back to the children they had at the start (or after `timeoutMs`). */
  async stopReaped(timeoutMs = 3000): Promise<CpuUse> {
    const deadline = Date.now() + timeoutMs;
    const pending = () =>
      this.reapers.some((pid) => childPids(pid).length > (this.childrenBefore.get(pid) ?? 0));
    while (pending() && Date.now() < deadline) await sleep(20);
    return this.stop();
  }
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
