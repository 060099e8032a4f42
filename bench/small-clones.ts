/** @file The small-clone workloads: sequential clones (latency, CPU per clone) and concurrent bursts. */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CONTENDER_LABELS,
  cloneOnce,
  type GitContenderId,
  type GitWorkloadContext,
  meter,
  usable,
} from './git-workloads.js';
import type { Outcome } from './outcome.js';
import type { CpuUse } from './proc.js';
import { type LatencySummary, summarize } from './stats.js';

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
