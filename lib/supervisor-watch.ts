import { readFileSync } from 'node:fs';
import { ConfigError } from './config.js';

/** Set by a supervisor (`stack/supervisor.ts`) on every service it starts: its own process id. */
export const SUPERVISOR_PID_ENV = 'SUPERVISOR_PID';

/** The supervisor's pid from `SUPERVISOR_PID`; undefined when unset or empty. */
export function supervisorPid(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[SUPERVISOR_PID_ENV];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[1-9]\d{0,9}$/.test(raw)) {
    throw new ConfigError(`${SUPERVISOR_PID_ENV} must be a process id, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** Fields after the command name of /proc/<pid>/stat (state, ppid, …); undefined where there is no /proc. */
function procStat(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The parent pid as the kernel sees it now (`process.ppid` is fixed at start-up); undefined without /proc. */
export function currentParentPid(): number | undefined {
  const ppid = procStat('self')?.[1];
  return ppid === undefined ? undefined : Number(ppid);
}

/** Whether `pid` is a running process: it exists (kill 0; EPERM counts) and is not a zombie. */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procStat(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/**
 * Calls `onGone` once when the supervisor `pid` has ended: checked every `intervalMs`, it is gone
 * when it no longer runs (or is a zombie) or, if it was this process's parent at the start, when
 * this process has been re-parented. Nothing is watched when `pid` is undefined (a service started
 * by hand). The timer never keeps the process alive. Returns a function that ends the watch.
 */
export function watchSupervisor(pid: number | undefined, onGone: () => void, intervalMs = 1_000): () => void {
  if (pid === undefined) return () => undefined;
  const wasParent = currentParentPid() === pid;
  const timer = setInterval(() => {
    if (processRunning(pid) && (!wasParent || currentParentPid() === pid)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
