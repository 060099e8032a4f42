import type { GitContenderId, LargeCloneResult } from './git-workloads.js';
import { CONTENDER_LABELS, GIT_CONTENDERS } from './git-workloads.js';
import { type Outcome, okValue } from './outcome.js';
import { largeCloneCpu, renderServerCpu } from './report-cpu.js';
import { renderFreshStacks } from './report-fresh-stacks.js';
import { renderScaleOut } from './report-scale-out.js';
import type { BenchResults, ThroughputId } from './results.js';
import type { ThroughputResult } from './stack-workloads.js';
import { MIB, ratio } from './stats.js';
import { THROUGHPUT_IDS, THROUGHPUT_LABELS } from './throughput.js';

/** Ratios, targets and the markdown table of a run. */

/** The Gitaly-direct contender with the same transport as a bridge-only one. */
const DIRECT_OF: Partial<Record<ThroughputId, ThroughputId>> = {
  'bridge-h2': 'gitaly-direct',
  'bridge-http1': 'gitaly-direct',
  'bridge-h2-stream': 'gitaly-direct-stream',
  'bridge-http1-stream': 'gitaly-direct-stream',
};
/** Short names of the throughput CPU counters. */
const THROUGHPUT_PROCESS: Record<string, string> = { gitaly: 'mock Gitaly', 'gitaly-git': 'git' };

export function fmt(x: number | undefined, digits = 2, unit = ''): string {
  return x === undefined || !Number.isFinite(x) ? '–' : `${x.toFixed(digits)}${unit}`;
}

export const times = (x: number | undefined) => fmt(x, 2, '×');
const seconds = (ms: number | undefined) => fmt(ms === undefined ? undefined : ms / 1000, 2, ' s');
const millis = (ms: number | undefined) => fmt(ms, 0, ' ms');
export const mib = (kib: number | undefined) => fmt(kib === undefined ? undefined : kib / 1024, 1, ' MiB');
const size = (bytes: number) =>
  bytes >= 1024 * MIB ? `${(bytes / 1024 / MIB).toFixed(2)} GiB` : `${(bytes / MIB).toFixed(1)} MiB`;

function cell<T>(o: Outcome<T> | undefined, show: (v: T) => string): string {
  if (!o) return 'not run';
  return o.ok ? show(o.value) : '**FAILED**';
}

function largeMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.largeClone?.[id])?.medianMs;
}
function historyMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.historyClone?.[id])?.medianMs;
}
/** Mean busy CPU seconds of the whole machine per clone. */
function machineCpu(clones: Outcome<LargeCloneResult> | undefined): number | undefined {
  const cpu = okValue(clones)?.cpu.map((c) => c.machine);
  return cpu && cpu.length > 0 ? cpu.reduce((a, b) => a + b, 0) / cpu.length : undefined;
}
function pushMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.push?.[id])?.medianMs;
}
/** p99 of the highest concurrency level. */
function concurrentP99(r: BenchResults, id: GitContenderId) {
  const top = Math.max(...r.settings.concurrency);
  return okValue(r.concurrency?.find((c) => c.level === top)?.results[id])?.latency?.p99;
}
function smallP50(r: BenchResults, id: GitContenderId) {
  return okValue(r.smallClone?.[id])?.p50;
}
function tput(r: BenchResults, id: ThroughputId) {
  return okValue(r.throughput?.[id])?.medianMiBps;
}

/** Bridge + mock Gitaly (own, git apart) CPU seconds per GiB of a throughput contender. */
function bridgeAndGitalyCpu(v: ThroughputResult | undefined): number | undefined {
  return v && (v.cpuPerGiB.bridge ?? 0) + (v.cpuPerGiB.gitaly ?? 0);
}

/** The ratios of a run, by key (their names are what the report prints). */
export function ratiosOf(r: BenchResults) {
  const cells = largeCloneCpu(r, 'cells');
  const sshd = largeCloneCpu(r, 'openssh')?.sshd;
  const cellsHttp = largeCloneCpu(r, 'cells-http');
  const cpu = (id: ThroughputId) => bridgeAndGitalyCpu(okValue(r.throughput?.[id]));
  const entries = {
    largeVsSsh: [
      'cells-path / OpenSSH, large clone wall time',
      ratio(largeMedian(r, 'cells'), largeMedian(r, 'openssh')),
    ],
    largeCpuVsSsh: [
      'cells-path / OpenSSH, large clone machine CPU per clone',
      ratio(machineCpu(r.largeClone?.cells), machineCpu(r.largeClone?.openssh)),
    ],
    historyVsSsh: [
      'cells-path / OpenSSH, realistic-history clone wall time',
      ratio(historyMedian(r, 'cells'), historyMedian(r, 'openssh')),
    ],
    historyCpuVsSsh: [
      'cells-path / OpenSSH, realistic-history clone machine CPU per clone',
      ratio(machineCpu(r.historyClone?.cells), machineCpu(r.historyClone?.openssh)),
    ],
    historyVsDirect: [
      'cells-path / direct, realistic-history clone wall time',
      ratio(historyMedian(r, 'cells'), historyMedian(r, 'direct')),
    ],
    pushVsSsh: [
      'cells-path / OpenSSH, push (median)',
      ratio(pushMedian(r, 'cells'), pushMedian(r, 'openssh')),
    ],
    concurrentP99VsSsh: [
      `cells-path / OpenSSH, p99 of ${Math.max(...r.settings.concurrency)} concurrent small clones`,
      ratio(concurrentP99(r, 'cells'), concurrentP99(r, 'openssh')),
    ],
    httpLargeVsNginx: [
      'cells-path HTTP / nginx + git http-backend, large clone wall time',
      ratio(largeMedian(r, 'cells-http'), largeMedian(r, 'nginx')),
    ],
    httpLargeCpuVsNginx: [
      'cells-path HTTP / nginx + git http-backend, large clone machine CPU per clone',
      ratio(machineCpu(r.largeClone?.['cells-http']), machineCpu(r.largeClone?.nginx)),
    ],
    httpSmallVsNginx: [
      'cells-path HTTP / nginx + git http-backend, small clone p50',
      ratio(smallP50(r, 'cells-http'), smallP50(r, 'nginx')),
    ],
    httpPushVsNginx: [
      'cells-path HTTP / nginx + git http-backend, push (median)',
      ratio(pushMedian(r, 'cells-http'), pushMedian(r, 'nginx')),
    ],
    httpConcurrentP99VsNginx: [
      `cells-path HTTP / nginx + git http-backend, p99 of ${Math.max(...r.settings.concurrency)} concurrent small clones`,
      ratio(concurrentP99(r, 'cells-http'), concurrentP99(r, 'nginx')),
    ],
    bridgeHttpVsSsh: [
      'bridge CPU per large clone, over HTTP / over the SSH tunnel',
      ratio(cellsHttp?.bridge, cells?.bridge),
    ],
    largeVsDirect: [
      'cells-path / direct, large clone wall time',
      ratio(largeMedian(r, 'cells'), largeMedian(r, 'direct')),
    ],
    smallVsSsh: [
      'cells-path / OpenSSH, small clone p50',
      ratio(smallP50(r, 'cells'), smallP50(r, 'openssh')),
    ],
    smallVsDirect: [
      'cells-path / direct, small clone p50',
      ratio(smallP50(r, 'cells'), smallP50(r, 'direct')),
    ],
    routerVsSshd: [
      'router / the OpenSSH server’s own processes, CPU per large clone (git apart)',
      ratio(cells?.router, sshd),
    ],
    bridgeVsSshd: [
      'bridge / the OpenSSH server’s own processes, CPU per large clone (git apart)',
      ratio(cells?.bridge, sshd),
    ],
    h2VsFloor: [
      'bridge-only (HTTP/2) / gRPC floor, throughput',
      ratio(tput(r, 'bridge-h2'), tput(r, 'grpc-floor')),
    ],
    h1VsFloor: [
      'bridge-only (HTTP/1.1) / gRPC floor, throughput',
      ratio(tput(r, 'bridge-http1'), tput(r, 'grpc-floor')),
    ],
    h2VsDirect: [
      'bridge-only (HTTP/2) / Gitaly direct, throughput, sidechannel (the bridge’s own cost)',
      ratio(tput(r, 'bridge-h2'), tput(r, 'gitaly-direct')),
    ],
    h1VsDirect: [
      'bridge-only (HTTP/1.1) / Gitaly direct, throughput, sidechannel',
      ratio(tput(r, 'bridge-http1'), tput(r, 'gitaly-direct')),
    ],
    h2VsDirectStream: [
      'bridge-only (HTTP/2) / Gitaly direct, throughput, stream mode',
      ratio(tput(r, 'bridge-h2-stream'), tput(r, 'gitaly-direct-stream')),
    ],
    h2VsH1: [
      'bridge-only HTTP/2 / HTTP/1.1, throughput, sidechannel',
      ratio(tput(r, 'bridge-h2'), tput(r, 'bridge-http1')),
    ],
    sidechannelVsStream: [
      'sidechannel / stream mode, bridge-only HTTP/2 throughput',
      ratio(tput(r, 'bridge-h2'), tput(r, 'bridge-h2-stream')),
    ],
    directSidechannelVsStream: [
      'sidechannel / stream mode, Gitaly direct throughput',
      ratio(tput(r, 'gitaly-direct'), tput(r, 'gitaly-direct-stream')),
    ],
    streamVsSidechannelCpu: [
      'stream mode / sidechannel, bridge + mock Gitaly CPU per GiB (bridge-only HTTP/2, git apart)',
      ratio(cpu('bridge-h2-stream'), cpu('bridge-h2')),
    ],
  } satisfies Record<string, [string, number | undefined]>;
  return entries;
}

function yesNo(met: boolean | undefined): string {
  return met === undefined ? 'not measured' : met ? '**met**' : '**missed**';
}

/** The results as markdown (the README's Performance section embeds it). */
export function renderMarkdown(r: BenchResults): string {
  const m = r.machine;
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`| ${cells.join(' | ')} |`);
  const head = (cells: string[]) => {
    row(cells);
    row(cells.map(() => '---'));
  };
  lines.push(
    `Run ${r.run.date} (${r.mode} mode) at commit \`${r.run.commit.slice(0, 12)}\`${r.run.dirty ? ' (with uncommitted changes)' : ''}.`,
    `Machine: ${m.cpuCount} × ${m.cpuModel}, ${(m.memoryBytes / 1024 ** 3).toFixed(1)} GiB RAM, ${m.os}; Node ${m.node}, ${m.git}, ${m.opensshClient}, server ${m.opensshServer}${m.httpServer ? `, ${m.httpServer}` : ''}. Load average (1 min) ${r.run.loadAverage.start} at the start, ${r.run.loadAverage.end ?? '–'} at the end.`,
    `Repositories: large ${size(r.repos.large.packBytes)} pack (${r.repos.large.files} incompressible files), small ${size(r.repos.small.packBytes)} pack, slow-reader ${size(r.repos.slow.packBytes)} pack, push ${size(r.repos.push.files * r.repos.push.fileBytes)} of new objects${r.repos.history ? `, realistic history ${size(r.repos.history.packBytes)} pack (${r.repos.history.commits} commits editing ${r.repos.history.files}+ text files)` : ''}.`,
    '',
    '**Git over five paths** (`git clone --bare` / `git push`, same client, same bare repositories; SSH and HTTP)',
    '',
  );
  head([
    'workload',
    ...GIT_CONTENDERS.map((c) => CONTENDER_LABELS[c]),
    'cells / OpenSSH',
    'cells / direct',
    'cells HTTP / nginx',
  ]);
  const gitRow = (
    label: string,
    pick: (id: GitContenderId) => number | undefined,
    show: (x: number | undefined) => string,
    outcome: (id: GitContenderId) => Outcome<unknown> | undefined,
    ratios = true,
  ) => {
    const values = GIT_CONTENDERS.map((id) => cell(outcome(id), () => show(pick(id))));
    const extra = ratios
      ? [
          times(ratio(pick('cells'), pick('openssh'))),
          times(ratio(pick('cells'), pick('direct'))),
          times(ratio(pick('cells-http'), pick('nginx'))),
        ]
      : ['', '', ''];
    row([label, ...values, ...extra]);
  };
  const h = r.repos.history;
  const clones = [
    ['Large clone', r.largeClone],
    [
      `Realistic-history clone (${h ? `${h.commits} commits, ${size(h.packBytes)}` : 'not generated'})`,
      r.historyClone,
    ],
  ] as const;
  for (const [label, results] of clones) {
    const of = (id: GitContenderId) => results?.[id];
    const runs = r.settings.largeCloneRuns;
    gitRow(`${label}, wall time (median of ${runs})`, (id) => okValue(of(id))?.medianMs, seconds, of);
    gitRow(`${label}, machine CPU per clone`, (id) => (machineCpu(of(id)) ?? Number.NaN) * 1000, seconds, of);
  }
  const sc = (id: GitContenderId) => r.smallClone?.[id];
  for (const p of ['p50', 'p95', 'p99'] as const) {
    gitRow(
      `Small clone ${p} (${r.settings.sequentialClones} sequential)`,
      (id) => okValue(sc(id))?.[p],
      millis,
      sc,
    );
  }
  gitRow(
    'Small clone, machine CPU per clone',
    (id) => (okValue(sc(id))?.cpuPerClone ?? Number.NaN) * 1000,
    millis,
    sc,
  );
  for (const level of r.settings.concurrency) {
    const res = r.concurrency?.find((c) => c.level === level)?.results;
    const co = (id: GitContenderId) => res?.[id];
    gitRow(
      `${level} concurrent clones: errors`,
      (id) => okValue(co(id))?.errors,
      (x) => fmt(x, 0),
      co,
      false,
    );
    gitRow(`${level} concurrent clones: p99`, (id) => okValue(co(id))?.latency?.p99, millis, co);
    gitRow(
      `${level} concurrent clones: clones/s`,
      (id) => okValue(co(id))?.clonesPerSecond,
      (x) => fmt(x, 1),
      co,
    );
  }
  const pu = (id: GitContenderId) => r.push?.[id];
  gitRow(
    `Push ${size(r.repos.push.files * r.repos.push.fileBytes)} of new objects (median of ${r.settings.pushRuns})`,
    (id) => okValue(pu(id))?.medianMs,
    seconds,
    pu,
  );

  lines.push(
    '',
    `**Throughput** (upload-pack response of the large repository, median of ${r.settings.throughputRuns})`,
    '',
  );
  head([
    'contender',
    'MiB/s',
    'vs gRPC floor',
    'vs Gitaly direct, same transport',
    'bridge + mock Gitaly CPU s/GiB (git apart)',
    'CPU s per GiB (by process)',
  ]);
  for (const id of THROUGHPUT_IDS) row(throughputRow(r, id));

  lines.push('', '**Memory** (RSS; bridge and router of the cell serving the repository)', '');
  head(['measure', 'router', 'bridge']);
  const im = r.idleMemory;
  const iv = okValue(im);
  row(['idle', cell(im, () => mib(iv?.idleKiB.router)), cell(im, () => mib(iv?.idleKiB.bridge))]);
  row([
    `${r.settings.idleTunnels} idle tunnels open`,
    cell(im, () => mib(iv?.withTunnelsKiB.router)),
    cell(im, () => mib(iv?.withTunnelsKiB.bridge)),
  ]);
  row([
    '**per idle tunnel**',
    cell(im, () => fmt(iv?.perTunnelKiB.router, 0, ' KiB')),
    cell(im, () => fmt(iv?.perTunnelKiB.bridge, 0, ' KiB')),
  ]);
  row([
    'after closing them',
    cell(im, () => mib(iv?.afterCloseKiB.router)),
    cell(im, () => mib(iv?.afterCloseKiB.bridge)),
  ]);
  const sb = r.slowReader?.bridge;
  const sr = r.slowReader?.router;
  const rate = `${r.settings.slowReadRateMiBps} MiB/s`;
  row([
    `slow reader, ${size(r.repos.slow.packBytes)} straight from the bridge (HTTP/2, ${rate}): peak`,
    '–',
    cell(sb, (v) => mib(v.peakKiB.bridge)),
  ]);
  row([
    `slow reader through the router (ssh, ${rate}): peak`,
    cell(sr, (v) => mib(v.peakKiB.router)),
    cell(sr, (v) => mib(v.peakKiB.bridge)),
  ]);

  const worlds = okValue(r.worldStartup);
  if (r.worldStartup) {
    lines.push(
      '',
      '**World start-up** (`startWorld` of a topology file, until every service is listening)',
      '',
    );
    head(['cells', 'processes', 'first start', 'warm start', 'RSS of the world']);
    if (!worlds) row(['FAILED', '', '', '', '']);
    for (const w of worlds ?? [])
      row([String(w.cells), String(w.processes), `${w.firstMs} ms`, `${w.warmMs} ms`, `${w.rssMiB} MiB`]);
  }

  lines.push(...renderScaleOut(r.scaleOut), ...renderFreshStacks(r));
  lines.push('', '**Targets**', '');
  head(['target', 'measured', 'status']);
  for (const t of r.targets) row([t.name, t.measured, yesNo(t.met)]);

  const serverCpu = renderServerCpu(r);
  if (serverCpu.length > 0) lines.push('', ...serverCpu);
  const algos = (['openssh', 'cells'] as const)
    .map((id) => {
      const a = r.settings.ssh[id];
      return a ? `${CONTENDER_LABELS[id]} ${a.kex} / ${a.cipher}` : undefined;
    })
    .filter(Boolean);
  if (algos.length > 0)
    lines.push('', `SSH key exchange / cipher negotiated by the same client: ${algos.join('; ')}.`);
  if (r.notes.length > 0) lines.push('', ...r.notes.map((n) => `- ${n}`));
  if (r.failures.length > 0) {
    lines.push(
      '',
      '**Failures**',
      '',
      ...r.failures.map((f) => `- ${f.what}: ${f.error.replace(/\n/g, ' ')}`),
    );
  }
  return `${lines.join('\n')}\n`;
}

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
