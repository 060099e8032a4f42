import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FailureLog, Outcome } from './outcome.js';
import { type CpuCounter, CpuMeter, type CpuUse, describeFailure, mustRun, run } from './proc.js';
import { type GeneratedRepo, placeRepo } from './repo-gen.js';
import { median } from './stats.js';

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

export function meter(c: GitContender, role: RepoRole): CpuMeter {
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

export function usable(c: GitContender): void {
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
export async function cloneOnce(
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

/** A contender of repeated clones under the key its results are filed by (a contender, or one with another cipher). */
export interface CloneEntry<K extends string> {
  key: K;
  contender: GitContender;
  label: string;
}

/** Every contender under its own id. */
export function contenderEntries(ctx: GitWorkloadContext): CloneEntry<GitContenderId>[] {
  return ctx.contenders.map((c) => ({ key: c.id, contender: c, label: CONTENDER_LABELS[c.id] }));
}

/**
 * Repeated clones of one repository (the large one, the realistic history): `runs` rounds,
 * entries interleaved within each round to share any drift.
 */
export async function repeatedClones<K extends string>(
  ctx: GitWorkloadContext,
  runs: number,
  role: 'large' | 'history',
  entries: readonly CloneEntry<K>[],
): Promise<Record<K, Outcome<LargeCloneResult>>> {
  const acc = new Map<K, LargeCloneResult>();
  const out = {} as Record<K, Outcome<LargeCloneResult>>;
  for (let round = 0; round < runs; round++) {
    for (const { key, contender: c, label } of entries) {
      if (out[key] && !out[key].ok) continue;
      out[key] = await ctx.failures.attempt(`${role} clone, ${label}`, async () => {
        usable(c);
        const m = meter(c, role);
        const ms = await cloneOnce(ctx, c, role, join(ctx.scratch, `${role}-${key}`));
        const cpu = await m.stopReaped();
        const r = acc.get(key) ?? { runsMs: [], medianMs: 0, cpu: [] };
        r.runsMs.push(ms);
        r.cpu.push(cpu);
        r.medianMs = median(r.runsMs) ?? 0;
        acc.set(key, r);
        ctx.log(`${role} clone ${round + 1}/${runs} ${label}: ${(ms / 1000).toFixed(2)} s`);
        return r;
      });
    }
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
