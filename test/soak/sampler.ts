import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/** One sample of one service. */
export interface Sample {
  /** Minutes since the soak started. */
  minute: number;
  service: string;
  pid: number;
  rssMiB: number;
  /** From the service itself (heap-probe.mjs), undefined when it has not reported yet. */
  heapUsedMiB: number | undefined;
  fds: number;
  sockets: number;
  /** Where the RSS is (MiB), when /proc and the service's probe tell: see `MemoryDetail`. */
  detail?: MemoryDetail;
}

/**
 * The RSS taken apart (MiB): `anon` and `file` from /proc/<pid>/smaps_rollup; from the service's
 * probe the V8 heap's committed bytes (`heap`, and its `newSpace`, `oldSpace`, `codeSpace`,
 * `largeObjects`), `external` and `arrayBuffers` (malloc'd, inside `anon`); `native` = anon − heap:
 * malloc'd memory, thread stacks, arenas.
 */
export interface MemoryDetail {
  anon: number;
  file: number;
  heap?: number;
  newSpace?: number;
  oldSpace?: number;
  codeSpace?: number;
  largeObjects?: number;
  external?: number;
  arrayBuffers?: number;
  native?: number;
}

const MIB = 1024 * 1024;

function rssBytes(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function descriptors(pid: number): { fds: number; sockets: number } | undefined {
  try {
    const entries = readdirSync(`/proc/${pid}/fd`);
    let sockets = 0;
    for (const e of entries) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${e}`).startsWith('socket:')) sockets++;
      } catch {
        // closed while we looked
      }
    }
    return { fds: entries.length, sockets };
  } catch {
    return undefined;
  }
}

/** What heap-probe.mjs writes. */
interface Probe {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces: Record<string, number>;
}

function probe(probeDir: string, pid: number): Probe | undefined {
  const file = join(probeDir, `${pid}.json`);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Probe;
  } catch {
    return undefined;
  }
}

function rollup(pid: number): { anon: number; file: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    const anon = kb('Anonymous');
    return { anon: anon / 1024, file: (kb('Rss') - anon) / 1024 };
  } catch {
    return undefined;
  }
}

function memoryDetail(pid: number, p: Probe | undefined): MemoryDetail | undefined {
  const r = rollup(pid);
  if (!r) return undefined;
  if (!p?.spaces) return r;
  const sp = (name: string) => (p.spaces[name] ?? 0) / MIB;
  const heap = Object.values(p.spaces).reduce((a, b) => a + b, 0) / MIB;
  return {
    ...r,
    heap,
    newSpace: sp('new_space'),
    oldSpace: sp('old_space'),
    codeSpace: sp('code_space'),
    largeObjects: sp('large_object_space') + sp('new_large_object_space') + sp('code_large_object_space'),
    external: p.external / MIB,
    arrayBuffers: p.arrayBuffers / MIB,
    native: r.anon - heap,
  };
}

/** Samples every service of `pids` (name → pid) now. */
export function sampleServices(pids: Record<string, number>, probeDir: string, startedAt: number): Sample[] {
  const minute = (Date.now() - startedAt) / 60_000;
  const out: Sample[] = [];
  for (const [service, pid] of Object.entries(pids)) {
    const rss = rssBytes(pid);
    const fd = descriptors(pid);
    if (rss === undefined || fd === undefined) continue;
    const p = probe(probeDir, pid);
    const detail = memoryDetail(pid, p);
    out.push({
      minute,
      service,
      pid,
      rssMiB: rss / MIB,
      heapUsedMiB: p === undefined ? undefined : p.heapUsed / MIB,
      ...fd,
      ...(detail ? { detail } : {}),
    });
  }
  return out;
}

/** Growth of one measure of one service from its first samples at or after `fromMinute` to its last. */
export interface Growth {
  service: string;
  base: number;
  end: number;
  /** Percent; base and end are means of (up to) 3 samples each (RSS and heap move with GC). */
  percent: number;
}

export function growth(
  samples: Sample[],
  service: string,
  fromMinute: number,
  measure: (s: Sample) => number | undefined,
): Growth | undefined {
  const mine = samples.filter((s) => s.service === service && measure(s) !== undefined);
  const after = mine.filter((s) => s.minute >= fromMinute);
  if (after.length < 2) return undefined;
  const mean = (xs: Sample[]) => xs.reduce((a, s) => a + (measure(s) as number), 0) / xs.length;
  const base = mean(after.slice(0, Math.min(3, Math.floor(after.length / 2))));
  const end = mean(after.slice(-Math.min(3, Math.floor(after.length / 2))));
  return { service, base, end, percent: base === 0 ? 0 : ((end - base) / base) * 100 };
}
