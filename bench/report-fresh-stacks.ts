import type { FreshStacksResult } from './fresh-stacks.js';
import { type Outcome, okValue } from './outcome.js';
import { largeCloneCpu, perGiBServed } from './report-cpu.js';
import type { BenchResults, Target } from './results.js';

/** The fresh-stacks section of the report and its target (issue 25 "the slow mode"). */

export function renderFreshStacks(r: BenchResults): string[] {
  const o: Outcome<FreshStacksResult> | undefined = r.freshStacks;
  if (!o) return [];
  const v = okValue(o);
  const idle = v?.idleMs ? `, then idle for ${v.idleMs / 1000} s` : '';
  const title = `**Large clone on fresh stacks** (the stack started anew for each clone, warmed up by one small clone${idle}; router CPU per clone, min / median / max, and per GiB of the ${(r.repos.large.packBytes / 1024 ** 2).toFixed(0)} MiB pack)`;
  if (!v) return ['', title, '', `FAILED: ${o.ok ? '' : o.error.replace(/\n/g, ' ')}`];
  const s = (x: number) => `${x.toFixed(2)} s (${(perGiBServed(r, x) ?? 0).toFixed(2)} s/GiB)`;
  return [
    '',
    title,
    '',
    `${v.runs.length} starts: min ${s(v.routerCpu.min)}, median ${s(v.routerCpu.median)}, max ${s(v.routerCpu.max)}; each start: ${v.runs.map((x) => x.routerCpu.toFixed(2)).join(', ')} s.`,
  ];
}

/** Issue 25: router CPU per GiB ≤ 2.0× OpenSSH's own processes in every fresh start. */
export function freshStackTargets(r: BenchResults): Target[] {
  if (!r.freshStacks) return [];
  const v = okValue(r.freshStacks);
  const sshd = largeCloneCpu(r, 'openssh')?.sshd;
  const worst = v && sshd ? v.routerCpu.max / sshd : undefined;
  return [
    {
      name: `Router CPU per GiB ≤ 2.0× the OpenSSH server’s own processes in every one of ${v?.runs.length ?? 'the'} fresh starts`,
      measured: worst === undefined ? '–' : `${worst.toFixed(2)}× (the worst start)`,
      met: worst === undefined ? undefined : worst <= 2,
    },
  ];
}
