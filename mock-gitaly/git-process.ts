import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { GitCommand } from './git-command.js';

/** How long a git process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000;

/**
 * How long git gets to end by itself on the EOF of its stdin before SIGTERM. A receive-pack that
 * sees its input end removes its quarantine (`objects/tmp_objdir-incoming-*`); one ended by a signal
 * leaves it (git >= 2.39 never cleans up from a signal handler; `quarantine.ts` sweeps it).
 */
export const EOF_GRACE_MS = 500;

/**
 * A spawned command in its own process group, so killing it also reaches what it started
 * (pack-objects, hooks): EOF on its stdin, SIGTERM to the group if it still runs after
 * `EOF_GRACE_MS`, then SIGKILL after `KILL_GRACE_MS`.
 */
export class GitProcess {
  readonly child: ChildProcessWithoutNullStreams;
  private killTimer: NodeJS.Timeout | undefined;

  constructor(command: GitCommand) {
    this.child = spawn(command.file, command.args, {
      cwd: command.cwd,
      env: command.env,
      stdio: 'pipe',
      detached: true,
    });
  }

  kill(): void {
    if (this.killTimer) return;
    // Closed, not ended: what is still queued for git is dropped, so git sees the EOF now.
    this.child.stdin.destroy();
    this.killTimer = setTimeout(() => {
      this.signal('SIGTERM');
      this.killTimer = setTimeout(() => this.signal('SIGKILL'), KILL_GRACE_MS);
    }, EOF_GRACE_MS);
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is already gone.
    }
  }
}

/** The live git processes of one server, so stopping the server can kill them all. */
export class GitProcessRegistry {
  private readonly live = new Set<GitProcess>();
  private readonly waiters = new Set<() => void>();

  add(proc: GitProcess): void {
    this.live.add(proc);
  }

  delete(proc: GitProcess): void {
    this.live.delete(proc);
    if (this.live.size === 0) for (const wake of this.waiters) wake();
  }

  get size(): number {
    return this.live.size;
  }

  killAll(): void {
    for (const proc of this.live) proc.kill();
  }

  /** Resolves when no process is left, or after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<void> {
    if (this.live.size === 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }
}
