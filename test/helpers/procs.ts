import { readdirSync, readFileSync } from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  /** Process group id. */
  pgid: number;
  comm: string;
  /** Process state letter from /proc/<pid>/stat; 'Z' is a zombie (exited, not yet reaped). */
  state: string;
  cmdline: string;
}

/** Every process visible in /proc, with parent pid, name and command line. */
export function listProcesses(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      out.push({
        pid: Number(entry),
        ppid: Number(fields[1]),
        pgid: Number(fields[2]),
        comm,
        state: fields[0] as string,
        cmdline,
      });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** All descendants of `pid` (children, grandchildren, …). */
export function descendants(pid: number, procs = listProcesses()): Proc[] {
  const found: Proc[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = procs.filter((p) => frontier.includes(p.ppid));
    found.push(...next);
    frontier = next.map((p) => p.pid);
  }
  return found;
}

/**
 * Live git processes started by any of the given service pids. Zombies are left out: in a
 * container whose PID 1 does not reap, a killed grandchild stays a zombie although it has ended.
 */
export function gitChildrenOf(pids: number[]): Proc[] {
  const procs = listProcesses();
  return pids
    .flatMap((pid) => descendants(pid, procs))
    .filter((p) => p.comm.startsWith('git') && p.state !== 'Z');
}

/**
 * Live processes (zombies left out) of the process group `pgid` or whose command line contains
 * `marker` (e.g. a stack's data folder, which is in every service's `--config` path).
 */
export function processesOf(pgid: number, marker?: string): Proc[] {
  return listProcesses().filter(
    (p) =>
      p.state !== 'Z' &&
      p.pid !== process.pid &&
      (p.pgid === pgid || (marker !== undefined && p.cmdline.includes(marker))),
  );
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resident set size of `pid` in MiB (VmRSS), undefined when it is gone. */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
