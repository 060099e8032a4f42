import { okValue } from './outcome.js';
import { cell, fmt, type MarkdownLines, mib, size, times } from './report-format.js';
import { bridgeAndGitalyCpu, tput } from './report-values.js';
import type { BenchResults, ThroughputId } from './results.js';
import { ratio } from './stats.js';
import { THROUGHPUT_IDS, THROUGHPUT_LABELS } from './throughput.js';

/** The report's tables of the services alone: throughput, memory, world start-up. */

/** The Gitaly-direct contender with the same transport as a bridge-only one. */
const DIRECT_OF: Partial<Record<ThroughputId, ThroughputId>> = {
  'bridge-h2': 'gitaly-direct',
  'bridge-http1': 'gitaly-direct',
  'bridge-h2-stream': 'gitaly-direct-stream',
  'bridge-http1-stream': 'gitaly-direct-stream',
};
/** Short names of the throughput CPU counters. */
const THROUGHPUT_PROCESS: Record<string, string> = { gitaly: 'mock Gitaly', 'gitaly-git': 'git' };

function throughputRow(r: BenchResults, id: ThroughputId): string[] {
  const o = r.throughput?.[id];
  const v = okValue(o);
  const direct = DIRECT_OF[id];
  const perGiB = v
    ? Object.entries(v.cpuPerGiB)
        .map(([k, sec]) => `${THROUGHPUT_PROCESS[k] ?? k} ${sec.toFixed(2)}`)
        .join(', ')
    : '';
  return [
    THROUGHPUT_LABELS[id],
    cell(o, (x) => fmt(x.medianMiBps, 0)),
    v ? times(ratio(v.medianMiBps, tput(r, 'grpc-floor'))) : '–',
    v && direct ? times(ratio(v.medianMiBps, tput(r, direct))) : '–',
    id === 'grpc-floor' ? '–' : fmt(bridgeAndGitalyCpu(v)),
    perGiB,
  ];
}

export function renderThroughput(r: BenchResults, md: MarkdownLines): void {
  md.push(
    '',
    `**Throughput** (upload-pack response of the large repository, median of ${r.settings.throughputRuns})`,
    '',
  );
  md.head([
    'contender',
    'MiB/s',
    'vs gRPC floor',
    'vs Gitaly direct, same transport',
    'bridge + mock Gitaly CPU s/GiB (git apart)',
    'CPU s per GiB (by process)',
  ]);
  for (const id of THROUGHPUT_IDS) md.row(throughputRow(r, id));
}

/** Idle RSS, idle tunnels, the slow reader's peaks. */
export function renderMemory(r: BenchResults, md: MarkdownLines): void {
  md.push('', '**Memory** (RSS; bridge and router of the cell serving the repository)', '');
  md.head(['measure', 'router', 'bridge']);
  const im = r.idleMemory;
  const iv = okValue(im);
  md.row(['idle', cell(im, () => mib(iv?.idleKiB.router)), cell(im, () => mib(iv?.idleKiB.bridge))]);
  md.row([
    `${r.settings.idleTunnels} idle tunnels open`,
    cell(im, () => mib(iv?.withTunnelsKiB.router)),
    cell(im, () => mib(iv?.withTunnelsKiB.bridge)),
  ]);
  md.row([
    '**per idle tunnel**',
    cell(im, () => fmt(iv?.perTunnelKiB.router, 0, ' KiB')),
    cell(im, () => fmt(iv?.perTunnelKiB.bridge, 0, ' KiB')),
  ]);
  md.row([
    'after closing them',
    cell(im, () => mib(iv?.afterCloseKiB.router)),
    cell(im, () => mib(iv?.afterCloseKiB.bridge)),
  ]);
  const sb = r.slowReader?.bridge;
  const sr = r.slowReader?.router;
  const rate = `${r.settings.slowReadRateMiBps} MiB/s`;
  md.row([
    `slow reader, ${size(r.repos.slow.packBytes)} straight from the bridge (HTTP/2, ${rate}): peak`,
    '–',
    cell(sb, (v) => mib(v.peakKiB.bridge)),
  ]);
  md.row([
    `slow reader through the router (ssh, ${rate}): peak`,
    cell(sr, (v) => mib(v.peakKiB.router)),
    cell(sr, (v) => mib(v.peakKiB.bridge)),
  ]);
}

export function renderWorldStartup(r: BenchResults, md: MarkdownLines): void {
  if (!r.worldStartup) return;
  const worlds = okValue(r.worldStartup);
  md.push('', '**World start-up** (`startWorld` of a topology file, until every service is listening)', '');
  md.head(['cells', 'processes', 'first start', 'warm start', 'RSS of the world']);
  if (!worlds) md.row(['FAILED', '', '', '', '']);
  for (const w of worlds ?? [])
    md.row([String(w.cells), String(w.processes), `${w.firstMs} ms`, `${w.warmMs} ms`, `${w.rssMiB} MiB`]);
}
