import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FailureLog, Outcome } from './outcome.js';
import { type CpuCounter, CpuMeter, type CpuUse, describeFailure, mustRun, run } from './proc.js';
import { type GeneratedRepo, placeRepo } from './repo-gen.js';
import { type LatencySummary, median, summarize } from './stats.js';

/**
 * The same `git` client against the same bare repositories, five ways in: direct, over SSH (OpenSSH,
 * the cells path) and over HTTP (nginx + git http-backend, the cells path's HTTP front).
 */
export type GitContenderId = 'direct' | 'openssh' | 'cells' | 'nginx' | 'cells-http';
export const GIT_CONTENDERS: readonly GitContenderId[] = [
  'direct',
  'openssh',
  'cells',
  'nginx',
  'cells-http',
];
export const CONTENDER_LABELS: Record<GitContenderId, string> = {
  direct: 'Direct (file://)',
  openssh: 'OpenSSH',
  cells: 'Cells path',
  nginx: 'nginx + git http-backend',
  'cells-http': 'Cells path (HTTP)',
};

export type RepoRole = 'large' | 'small' | 'history';

/** The server side of a contender for one repository: CPU counters by process, and who reaps git. */
export interface ServerSide {
  /** CPU counters by process (git's processes apart from the services). */
  cpu: Record<string, CpuCounter>;
  /** Server processes whose reaped children are counted: a measurement waits for them to reap. */
  reapers: readonly number[];
}

export interface GitContender {
  id: GitContenderId;
  /** Set when the contender could not be started: every workload then fails with this message. */
  unavailable?: string;
  url(role: RepoRole): string;
  env: NodeJS.ProcessEnv;
  /** The processes serving `role` (the cells path serves each repository from its own cell). */
  server(role: RepoRole): ServerSide;
}

function meter(c: GitContender, role: RepoRole): CpuMeter {
  const side = c.server(role);
  return new CpuMeter(side.cpu, side.reapers);
}

export interface ServedRepo {
  role: RepoRole;
  project: string;
  /** Folder of the bare repository all contenders serve. */
  dir: string;
  repo: GeneratedRepo;
}

export interface GitWorkloadContext {
  contenders: readonly GitContender[];
  repos: Record<RepoRole, ServedRepo>;
  scratch: string;
  opTimeoutMs: number;
  failures: FailureLog;
  log(line: string): void;
}

export type { CpuUse };

function usable(c: GitContender): void {
  if (c.unavailable) throw new Error(c.unavailable);
}

async function verifyHead(dest: string, expected: string): Promise<void> {
  const r = await mustRun('git', ['--git-dir', dest, 'rev-parse', 'refs/heads/main'], {
    timeoutMs: 30_000,
    keepStdout: true,
  });
  if (r.stdout.trim() !== expected)
    throw new Error(`clone has main at ${r.stdout.trim()}, expected ${expected}`);
}

/** One timed `git clone --bare` (no checkout: the transport, not the file system, is measured), then checked. */
async function cloneOnce(
  ctx: GitWorkloadContext,
  c: GitContender,
  role: RepoRole,
  dest: string,
): Promise<number> {
  const r = await run('git', ['clone', '-q', '--bare', c.url(role), dest], {
    env: c.env,
    timeoutMs: ctx.opTimeoutMs,
  });
  try {
    if (r.code !== 0) throw new Error(`git clone ${c.url(role)}: ${describeFailure(r)}`);
    await verifyHead(dest, ctx.repos[role].repo.head);
    return r.ms;
  } finally {
    await rm(dest, { recursive: true, force: true });
  }
}

export interface LargeCloneResult {
  runsMs: number[];
  medianMs: number;
  cpu: CpuUse[];
}

/**
 * Repeated clones of one repository (the large one, the realistic history): `runs` rounds,
 * contenders interleaved within each round to share any drift.
 */
export async function repeatedClones(
  ctx: GitWorkloadContext,
  runs: number,
  role: 'large' | 'history',
): Promise<Record<GitContenderId, Outcome<LargeCloneResult>>> {
  const acc = new Map<GitContenderId, LargeCloneResult>();
  const out = {} as Record<GitContenderId, Outcome<LargeCloneResult>>;
  for (let round = 0; round < runs; round++) {
    for (const c of ctx.contenders) {
      if (out[c.id] && !out[c.id].ok) continue;
      const o = await ctx.failures.attempt(`${role} clone, ${CONTENDER_LABELS[c.id]}`, async () => {
        usable(c);
        const m = meter(c, role);
        const ms = await cloneOnce(ctx, c, role, join(ctx.scratch, `${role}-${c.id}`));
        const cpu = await m.stopReaped();
        const r = acc.get(c.id) ?? { runsMs: [], medianMs: 0, cpu: [] };
        r.runsMs.push(ms);
        r.cpu.push(cpu);
        r.medianMs = median(r.runsMs) ?? 0;
        acc.set(c.id, r);
        ctx.log(`${role} clone ${round + 1}/${runs} ${CONTENDER_LABELS[c.id]}: ${(ms / 1000).toFixed(2)} s`);
        return r;
      });
      out[c.id] = o;
    }
  }
  return out;
}

export interface SmallCloneResult extends LatencySummary {
  /** Machine CPU seconds per clone. */
  cpuPerClone: number;
  serverCpuPerClone: Record<string, number>;
}

/** Small clone latency: `count` sequential clones per contender, interleaved clone by clone. */
export async function sequentialClones(
  ctx: GitWorkloadContext,
  count: number,
): Promise<Record<GitContenderId, Outcome<SmallCloneResult>>> {
  const samples = new Map<GitContenderId, number[]>();
  const cpu = new Map<GitContenderId, { machine: number; processes: Record<string, number> }>();
  const failed = new Map<GitContenderId, string>();
  for (const c of ctx.contenders) {
    if (c.unavailable)
      failed.set(c.id, ctx.failures.record(`small clones, ${CONTENDER_LABELS[c.id]}`, c.unavailable));
  }
  for (let i = 0; i < count; i++) {
    for (const c of ctx.contenders) {
      if (failed.has(c.id)) continue;
      const m = meter(c, 'small');
      try {
        const ms = await cloneOnce(ctx, c, 'small', join(ctx.scratch, `small-${c.id}`));
        samples.set(c.id, [...(samples.get(c.id) ?? []), ms]);
        const used = await m.stopReaped();
        const total = cpu.get(c.id) ?? { machine: 0, processes: {} };
        total.machine += used.machine;
        for (const [k, v] of Object.entries(used.processes))
          total.processes[k] = (total.processes[k] ?? 0) + v;
        cpu.set(c.id, total);
      } catch (err) {
        failed.set(
          c.id,
          ctx.failures.record(`small clone ${i + 1}/${count}, ${CONTENDER_LABELS[c.id]}`, err),
        );
      }
    }
    if ((i + 1) % 50 === 0) ctx.log(`small clones: ${i + 1}/${count}`);
  }
  const out = {} as Record<GitContenderId, Outcome<SmallCloneResult>>;
  for (const c of ctx.contenders) {
    const error = failed.get(c.id);
    const s = summarize(samples.get(c.id) ?? []);
    const used = cpu.get(c.id);
    if (error || !s || !used) {
      out[c.id] = { ok: false, error: error ?? 'no samples' };
      continue;
    }
    const perClone = Object.fromEntries(Object.entries(used.processes).map(([k, v]) => [k, v / s.count]));
    out[c.id] = {
      ok: true,
      value: { ...s, cpuPerClone: used.machine / s.count, serverCpuPerClone: perClone },
    };
  }
  return out;
}

export interface ConcurrencyResult {
  level: number;
  errors: number;
  firstError?: string;
  latency?: LatencySummary;
  wallMs: number;
  /** Successful clones per second of wall time. */
  clonesPerSecond: number;
  cpu: CpuUse;
}

/** `level` small clones started at once per contender: errors, latency percentiles, throughput. */
export async function concurrentClones(
  ctx: GitWorkloadContext,
  level: number,
): Promise<Record<GitContenderId, Outcome<ConcurrencyResult>>> {
  const out = {} as Record<GitContenderId, Outcome<ConcurrencyResult>>;
  for (const c of ctx.contenders) {
    out[c.id] = await ctx.failures.attempt(
      `${level} concurrent clones, ${CONTENDER_LABELS[c.id]}`,
      async () => {
        usable(c);
        const dir = join(ctx.scratch, `concurrent-${c.id}`);
        await mkdir(dir, { recursive: true });
        const m = meter(c, 'small');
        const started = performance.now();
        const results = await Promise.allSettled(
          Array.from({ length: level }, (_, i) => cloneOnce(ctx, c, 'small', join(dir, `c${i}`))),
        );
        const wallMs = performance.now() - started;
        const cpu = await m.stopReaped();
        await rm(dir, { recursive: true, force: true });
        const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const errors = results.filter((r) => r.status === 'rejected');
        const firstError =
          errors[0]?.status === 'rejected' ? String((errors[0].reason as Error).message) : undefined;
        const r: ConcurrencyResult = {
          level,
          errors: errors.length,
          latency: summarize(ok),
          wallMs,
          clonesPerSecond: ok.length / (wallMs / 1000),
          cpu,
        };
        if (firstError) {
          r.firstError = firstError;
          ctx.failures.record(
            `${level} concurrent clones, ${CONTENDER_LABELS[c.id]}: ${errors.length} of ${level} failed`,
            firstError,
          );
        }
        ctx.log(
          `${level} concurrent ${CONTENDER_LABELS[c.id]}: ${errors.length} errors, p99 ${r.latency?.p99.toFixed(0) ?? '-'} ms, ${r.clonesPerSecond.toFixed(1)} clones/s`,
        );
        return r;
      },
    );
  }
  return out;
}

export interface PushContext {
  /** Repository holding the small history plus the new objects on `branch`. */
  source: GeneratedRepo;
  /** The small repository the server side is reset to before each push. */
  base: GeneratedRepo;
  /** Server-side folder of the push target, shared by all contenders. */
  targetDir: string;
  url(c: GitContender): string;
}

export interface PushResult {
  runsMs: number[];
  medianMs: number;
  cpu: CpuUse[];
}

/** Push: the new objects on a fresh branch, the target reset to the small repository before every run. */
export async function pushes(
  ctx: GitWorkloadContext,
  p: PushContext,
  runs: number,
): Promise<Record<GitContenderId, Outcome<PushResult>>> {
  const out = {} as Record<GitContenderId, Outcome<PushResult>>;
  const acc = new Map<GitContenderId, PushResult>();
  for (let round = 0; round < runs; round++) {
    for (const c of ctx.contenders) {
      if (out[c.id] && !out[c.id].ok) continue;
      out[c.id] = await ctx.failures.attempt(`push, ${CONTENDER_LABELS[c.id]}`, async () => {
        usable(c);
        await placeRepo(p.base, p.targetDir);
        const ref = `refs/heads/${p.source.branch}`;
        const m = meter(c, 'small');
        const r = await run('git', ['--git-dir', p.source.dir, 'push', '-q', p.url(c), `${ref}:${ref}`], {
          env: c.env,
          timeoutMs: ctx.opTimeoutMs,
        });
        const cpu = await m.stopReaped();
        if (r.code !== 0) throw new Error(`git push: ${describeFailure(r)}`);
        const got = await mustRun('git', ['--git-dir', p.targetDir, 'rev-parse', ref], {
          timeoutMs: 30_000,
          keepStdout: true,
        });
        if (got.stdout.trim() !== p.source.head) throw new Error(`pushed ${ref} is ${got.stdout.trim()}`);
        const res = acc.get(c.id) ?? { runsMs: [], medianMs: 0, cpu: [] };
        res.runsMs.push(r.ms);
        res.cpu.push(cpu);
        res.medianMs = median(res.runsMs) ?? 0;
        acc.set(c.id, res);
        ctx.log(`push ${round + 1}/${runs} ${CONTENDER_LABELS[c.id]}: ${(r.ms / 1000).toFixed(2)} s`);
        return res;
      });
    }
  }
  return out;
}
