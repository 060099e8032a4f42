import { growth, type MemoryDetail, type Sample } from './sampler.js';
import type { OpResult } from './workload.js';

const COLOURS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#393b79',
  '#637939',
  '#8c6d31',
  '#843c39',
];

/** RSS over time per service as a small SVG line chart. */
export function rssSvg(samples: Sample[], services: string[]): string {
  const W = 760;
  const H = 360;
  const pad = { l: 50, r: 190, t: 20, b: 35 };
  const maxX = Math.max(1, ...samples.map((s) => s.minute));
  const maxY = Math.max(1, ...samples.map((s) => s.rssMiB)) * 1.1;
  const x = (m: number) => pad.l + (m / maxX) * (W - pad.l - pad.r);
  const y = (v: number) => H - pad.b - (v / maxY) * (H - pad.t - pad.b);
  const lines = services.map((svc, i) => {
    const pts = samples
      .filter((s) => s.service === svc)
      .map((s) => `${x(s.minute).toFixed(1)},${y(s.rssMiB).toFixed(1)}`)
      .join(' ');
    const c = COLOURS[i % COLOURS.length];
    return `<polyline fill="none" stroke="${c}" stroke-width="1.5" points="${pts}"/><text x="${W - pad.r + 10}" y="${pad.t + 14 * i + 10}" font-size="11" fill="${c}">${svc}</text>`;
  });
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = maxY * f;
    const m = maxX * f;
    return `<text x="${pad.l - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${v.toFixed(0)}</text><line x1="${pad.l}" x2="${W - pad.r}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${x(m)}" y="${H - pad.b + 14}" font-size="10" text-anchor="middle">${m.toFixed(0)}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    ...ticks,
    `<line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" stroke="black"/><line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${H - pad.b}" stroke="black"/>`,
    `<text x="${(pad.l + W - pad.r) / 2}" y="${H - 5}" font-size="11" text-anchor="middle">minutes</text>`,
    `<text x="12" y="${pad.t + 8}" font-size="11">RSS MiB</text>`,
    ...lines,
    '</svg>',
    '',
  ].join('\n');
}

export interface SoakSummary {
  minutes: number;
  startedAt: string;
  results: OpResult[];
  samples: Sample[];
  /** From this minute on, growth is measured (5, or a third of a shorter run). */
  steadyFrom: number;
  missingPushes: string[];
  svgName: string;
  limitPercent: number;
  sampleSeconds: number;
  workers: number;
}

const pct = (v: number | undefined) => (v === undefined ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(1)} %`);

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

const mib = (v: number | undefined) => (v === undefined ? 'n/a' : `${v >= 0 ? '+' : ''}${v.toFixed(1)}`);

/**
 * Where each service's RSS went from the steady base to the end (MiB, means of 3 samples as for the
 * growth): V8's committed old/new/code space, malloc'd memory (`native`), file-backed pages; and the
 * live heap, the least heap used of each half of the steady run (right after a mark-compact), which
 * a leak raises and promoted garbage waiting for the next mark-compact does not.
 */
function breakdownRows(sum: SoakSummary, services: string[]): string[] {
  return services.map((svc) => {
    const d = (k: keyof MemoryDetail) => growth(sum.samples, svc, sum.steadyFrom, (s) => s.detail?.[k]);
    const delta = (k: keyof MemoryDetail) => {
      const g = d(k);
      return g ? g.end - g.base : undefined;
    };
    const rss = growth(sum.samples, svc, sum.steadyFrom, (s) => s.rssMiB);
    const steady = sum.samples.filter(
      (s) => s.service === svc && s.minute >= sum.steadyFrom && s.heapUsedMiB !== undefined,
    );
    const half = Math.floor(steady.length / 2);
    const least = (xs: Sample[]) =>
      xs.length === 0 ? 'n/a' : Math.min(...xs.map((s) => s.heapUsedMiB as number)).toFixed(1);
    return `| ${svc} | ${mib(rss ? rss.end - rss.base : undefined)} | ${mib(delta('oldSpace'))} | ${mib(delta('newSpace'))} | ${mib(delta('codeSpace'))} | ${mib(delta('native'))} | ${mib(delta('file'))} | ${least(steady.slice(0, half))} → ${least(steady.slice(half))} |`;
  });
}

/** The soak's Markdown report; `violations` lists every growth over the limit and every error. */
export function renderSoak(sum: SoakSummary): { text: string; violations: string[] } {
  const services = [...new Set(sum.samples.map((s) => s.service))].sort();
  const ids = [...new Set(sum.results.map((r) => r.id))];
  const opRows = ids.map((id) => {
    const mine = sum.results.filter((r) => r.id === id);
    const ms = mine.map((r) => r.ms);
    const errors = mine.filter((r) => !r.ok).length;
    return `| ${id} | ${mine.length} | ${errors} | ${percentile(ms, 50)} | ${percentile(ms, 95)} |`;
  });
  const violations: string[] = [];
  const growthRows = services.map((svc) => {
    const g = {
      rss: growth(sum.samples, svc, sum.steadyFrom, (s) => s.rssMiB),
      heap: growth(sum.samples, svc, sum.steadyFrom, (s) => s.heapUsedMiB),
      fds: growth(sum.samples, svc, sum.steadyFrom, (s) => s.fds),
      sockets: growth(sum.samples, svc, sum.steadyFrom, (s) => s.sockets),
    };
    if (g.rss && g.rss.percent > sum.limitPercent) violations.push(`${svc} RSS grew ${pct(g.rss.percent)}`);
    // Descriptor counts are small integers: a few more in flight is not a leak.
    for (const k of ['fds', 'sockets'] as const) {
      const v = g[k];
      if (v && v.percent > sum.limitPercent && v.end - v.base > 5)
        violations.push(`${svc} ${k} grew ${pct(v.percent)}`);
    }
    const last = sum.samples.filter((s) => s.service === svc).at(-1);
    return `| ${svc} | ${g.rss?.base.toFixed(1) ?? 'n/a'} → ${g.rss?.end.toFixed(1) ?? 'n/a'} (${pct(g.rss?.percent)}) | ${pct(g.heap?.percent)} | ${g.fds?.base.toFixed(0) ?? '?'} → ${g.fds?.end.toFixed(0) ?? '?'} | ${g.sockets?.base.toFixed(0) ?? '?'} → ${g.sockets?.end.toFixed(0) ?? '?'} | ${last?.rssMiB.toFixed(1) ?? 'n/a'} |`;
  });
  const allowedErrors = sum.results.filter((r) => !r.ok);
  for (const e of allowedErrors) violations.push(`${e.id}: ${e.error}`);
  for (const m of sum.missingPushes) violations.push(`pushed commit missing: ${m}`);
  const pushes = sum.results.filter((r) => r.pushed).length;
  const text = [
    '# Soak',
    '',
    `Run ${sum.startedAt}, ${sum.minutes} min, ${sum.results.length} operations (${sum.results.filter((r) => r.ok).length} as expected, ${allowedErrors.length} errors), ${pushes} pushes verified by \`rev-parse\` in the bare repository right after each and all again at the end (${sum.missingPushes.length} missing).`,
    `${sum.workers} workers. Services sampled every ${sum.sampleSeconds} s (RSS and descriptors from /proc, heap from each process itself); growth is measured from minute ${sum.steadyFrom.toFixed(1)} to the end, limit ${sum.limitPercent} %: **${violations.length === 0 ? 'held' : `${violations.length} violations`}**.`,
    'Reproduce: `npm run soak -- --minutes 30`.',
    '',
    '| operation | count | errors | p50 ms | p95 ms |',
    '| --- | --- | --- | --- | --- |',
    ...opRows,
    '',
    `| service | RSS MiB (steady → end) | heap used | fds | sockets | last RSS MiB |`,
    '| --- | --- | --- | --- | --- | --- |',
    ...growthRows,
    '',
    'Where the RSS went (MiB, steady base → end) and the live heap (least heap used in each half of the steady run, MiB):',
    '',
    '| service | RSS | V8 old space | V8 new space | V8 code space | native (malloc) | file-backed | live heap |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...breakdownRows(sum, services),
    '',
    `![RSS per service over time](${sum.svgName})`,
    '',
    violations.length === 0
      ? 'No violations.'
      : `Violations:\n\n${violations.map((v) => `- ${v}`).join('\n')}`,
    '',
  ].join('\n');
  return { text, violations };
}
