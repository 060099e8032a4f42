import type { Logger } from '../lib/logger.js';
import type { GitCommand } from './git-command.js';
import { GitProcess, type GitProcessRegistry } from './git-process.js';
import { type NegotiationEnd, NegotiationMonitor } from './negotiation.js';

/** stderr kept for error messages; git's fatal lines are short. */
const STDERR_KEPT_BYTES = 8 * 1024;

export type GitBand = 'stdout' | 'stderr';

/** Where git's output goes: a bidi call's messages or a sidechannel's sideband packets. */
export interface GitOutput {
  /** Writes one piece of output; false when the client's buffer is full (then wait for `onceDrain`). */
  write(band: GitBand, chunk: Buffer): boolean;
  onceDrain(resume: () => void): void;
}

export interface GitRunOptions {
  command: GitCommand;
  logger: Logger;
  processes: GitProcessRegistry;
  output: GitOutput;
  /** Kill git unless the client's stdin shows the end of negotiation in time. */
  negotiation?: { until: NegotiationEnd; timeoutMs: number };
}

export type GitRunOutcome = 'ok' | 'failed' | 'negotiation-timeout' | 'cancelled' | 'spawn-failed';

export interface GitRunResult {
  outcome: GitRunOutcome;
  /** null when git never started or was killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The first 8 KiB of git's stderr. */
  stderr: string;
  spawnError: Error | undefined;
  stdinBytes: number;
  stdoutBytes: number;
  stderrBytes: number;
}

/**
 * One git process serving one client, whatever carries the bytes (bidi gRPC messages or a yamux
 * sidechannel): the transport feeds stdin with `writeStdin`/`endStdin` and receives git's output
 * through `GitOutput`, with backpressure both ways; `cancel()` (client gone) kills the process group
 * and drops the output. `done` resolves once git has exited; it never rejects.
 */
export class GitRun {
  readonly done: Promise<GitRunResult>;
  private readonly git: GitProcess;
  private readonly monitor: NegotiationMonitor | undefined;
  private readonly counts = { stdinBytes: 0, stdoutBytes: 0, stderrBytes: 0 };
  private readonly stderrKept: Buffer[] = [];
  private stderrKeptBytes = 0;
  private cancelled = false;
  private timedOut = false;
  private finished = false;
  private outputPaused = false;
  private spawnError: Error | undefined;

  constructor(private readonly opts: GitRunOptions) {
    const { logger, negotiation } = opts;
    this.git = new GitProcess(opts.command);
    opts.processes.add(this.git);
    this.monitor = negotiation
      ? new NegotiationMonitor(negotiation.until, negotiation.timeoutMs, () => {
          this.timedOut = true;
          logger.warn({ timeout_ms: negotiation.timeoutMs }, 'negotiation timed out; killing git');
          this.git.kill();
        })
      : undefined;
    const { child } = this.git;
    // git exiting while the client still sends gives EPIPE here; that is expected, never fatal.
    child.stdin.on('error', (err) => logger.debug({ err: err.message }, 'git stdin closed'));
    child.stdout.on('data', (chunk: Buffer) => this.onOutput('stdout', chunk));
    child.stderr.on('data', (chunk: Buffer) => this.onOutput('stderr', chunk));
    this.done = new Promise((resolve) => {
      child.on('error', (err) => {
        this.spawnError = err;
        // A process that never started emits no 'close'.
        if (child.pid === undefined) resolve(this.finish(null, null));
      });
      child.on('close', (code, signal) => resolve(this.finish(code, signal)));
    });
  }

  get exited(): boolean {
    return this.finished;
  }

  /** Client → git. False when git's stdin is full: wait for `onceStdinDrain` before writing more. */
  writeStdin(data: Buffer): boolean {
    const { stdin } = this.git.child;
    if (data.length === 0 || this.finished || !stdin.writable) return true;
    this.counts.stdinBytes += data.length;
    this.monitor?.feed(data);
    return stdin.write(data);
  }

  onceStdinDrain(resume: () => void): void {
    this.git.child.stdin.once('drain', () => {
      if (!this.finished) resume();
    });
  }

  /** The client's stdin ended (the negotiation monitor stops with it, as before). */
  endStdin(): void {
    this.monitor?.stop();
    this.git.child.stdin.end();
  }

  /** The client is gone: kill git (group, SIGTERM then SIGKILL) and let its pipes drain. */
  cancel(): void {
    if (this.cancelled || this.finished) return;
    this.cancelled = true;
    this.git.kill();
    this.git.child.stdout.resume();
    this.git.child.stderr.resume();
  }

  private onOutput(band: 'stdout' | 'stderr', chunk: Buffer): void {
    if (band === 'stdout') this.counts.stdoutBytes += chunk.length;
    else {
      this.counts.stderrBytes += chunk.length;
      if (this.stderrKeptBytes < STDERR_KEPT_BYTES) {
        const kept = chunk.subarray(0, STDERR_KEPT_BYTES - this.stderrKeptBytes);
        this.stderrKept.push(kept);
        this.stderrKeptBytes += kept.length;
      }
    }
    if (this.cancelled) return;
    if (this.opts.output.write(band, chunk) || this.outputPaused) return;
    const { stdout, stderr } = this.git.child;
    this.outputPaused = true;
    stdout.pause();
    stderr.pause();
    this.opts.output.onceDrain(() => {
      this.outputPaused = false;
      stdout.resume();
      stderr.resume();
    });
  }

  private finish(exitCode: number | null, signal: NodeJS.Signals | null): GitRunResult {
    this.finished = true;
    this.monitor?.stop();
    this.opts.processes.delete(this.git);
    const outcome: GitRunOutcome = this.cancelled
      ? 'cancelled'
      : this.spawnError
        ? 'spawn-failed'
        : this.timedOut
          ? 'negotiation-timeout'
          : exitCode === 0
            ? 'ok'
            : 'failed';
    return {
      outcome,
      exitCode,
      signal,
      stderr: Buffer.concat(this.stderrKept).toString('utf8'),
      spawnError: this.spawnError,
      ...this.counts,
    };
  }
}
