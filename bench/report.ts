import { CONTENDER_LABELS } from './git-workloads.js';
import { okValue } from './outcome.js';
import { renderServerCpu } from './report-cpu.js';
import { fmt, MarkdownLines, size, times } from './report-format.js';
import { renderFreshStacks } from './report-fresh-stacks.js';
import { renderGitTable } from './report-git.js';
import { renderScaleOut } from './report-scale-out.js';
import { renderMemory, renderThroughput, renderWorldStartup } from './report-services.js';
import type { BenchResults } from './results.js';
import { AES_GCM, AES_GCM_CONTENDERS } from './ssh-ciphers.js';

/**
 * The markdown report of a run, section by section (`report-git.ts`, `report-services.ts`,
 * `report-scale-out.ts`, `report-fresh-stacks.ts`, `report-cpu.ts`), and the ratio lines printed
 * at its end; the ratios themselves are in `report-ratios.ts`, the targets in `targets.ts`.
 */

function yesNo(met: boolean | undefined): string {
  return met === undefined ? 'not measured' : met ? '**met**' : '**missed**';
}

/** The run, the machine and the repositories, before the tables. */
function preamble(r: BenchResults): string[] {
  const m = r.machine;
  const h = r.repos.history;
  return [
    `Run ${r.run.date} (${r.mode} mode) at commit \`${r.run.commit.slice(0, 12)}\`${r.run.dirty ? ' (with uncommitted changes)' : ''}.`,
    `Machine: ${m.cpuCount} × ${m.cpuModel}, ${(m.memoryBytes / 1024 ** 3).toFixed(1)} GiB RAM, ${m.os}; Node ${m.node}, ${m.git}, ${m.opensshClient}, server ${m.opensshServer}${m.httpServer ? `, ${m.httpServer}` : ''}. Load average (1 min) ${r.run.loadAverage.start} at the start, ${r.run.loadAverage.end ?? '–'} at the end.`,
    `Repositories: large ${size(r.repos.large.packBytes)} pack (${r.repos.large.files} incompressible files), small ${size(r.repos.small.packBytes)} pack, slow-reader ${size(r.repos.slow.packBytes)} pack, push ${size(r.repos.push.files * r.repos.push.fileBytes)} of new objects${h ? `, realistic history ${size(h.packBytes)} pack (${h.commits} commits editing ${h.files}+ text files)` : ''}.`,
    '',
  ];
}

/** The targets table, the server CPU table, the negotiated SSH algorithms, notes and failures. */
function closing(r: BenchResults, md: MarkdownLines): void {
  md.push('', '**Targets**', '');
  md.head(['target', 'measured', 'status']);
  for (const t of r.targets) md.row([t.name, t.measured, yesNo(t.met)]);

  const serverCpu = renderServerCpu(r);
  if (serverCpu.length > 0) md.push('', ...serverCpu);
  const algos = (variant: '' | '-aes-gcm') =>
    AES_GCM_CONTENDERS.map((id) => {
      const a = r.settings.ssh[`${id}${variant}`];
      return a ? `${CONTENDER_LABELS[id]} ${a.kex} / ${a.cipher}` : undefined;
    }).filter((a): a is string => a !== undefined);
  const picked = algos('');
  const gcm = algos('-aes-gcm');
  if (picked.length > 0)
    md.push(
      '',
      `SSH key exchange / cipher negotiated by the same client: ${picked.join('; ')}${gcm.length > 0 ? `; with \`-c ${AES_GCM}\` (the AES-GCM rows): ${gcm.join('; ')}` : ''}.`,
    );
  if (r.notes.length > 0) md.push('', ...r.notes.map((n) => `- ${n}`));
  if (r.failures.length > 0) {
    md.push('', '**Failures**', '', ...r.failures.map((f) => `- ${f.what}: ${f.error.replace(/\n/g, ' ')}`));
  }
}

/** The results as markdown (the README's Performance section embeds it). */
export function renderMarkdown(r: BenchResults): string {
  const md = new MarkdownLines();
  md.push(...preamble(r));
  renderGitTable(r, md);
  renderThroughput(r, md);
  renderMemory(r, md);
  renderWorldStartup(r, md);
  md.push(...renderScaleOut(r.scaleOut), ...renderFreshStacks(r));
  closing(r, md);
  return `${md.lines.join('\n')}\n`;
}

/** The ratio lines printed at the end of a run. */
export function ratioLines(r: BenchResults): string[] {
  const idle = okValue(r.idleMemory);
  return [
    ...r.ratios.map((x) => `${x.name}: ${times(x.value)}`),
    `RSS per idle tunnel: bridge ${fmt(idle?.perTunnelKiB.bridge, 0, ' KiB')}, router ${fmt(idle?.perTunnelKiB.router, 0, ' KiB')}`,
    ...r.targets.map(
      (t) =>
        `target ${t.name}: ${t.measured} → ${t.met === undefined ? 'not measured' : t.met ? 'met' : 'MISSED'}`,
    ),
  ];
}
