import type { GitContenderId } from './git-workloads.js';
import { CONTENDER_LABELS, GIT_CONTENDERS } from './git-workloads.js';
import { type Outcome, okValue } from './outcome.js';
import type { BenchResults, Ratio, ThroughputId } from './results.js';
import { MIB, ratio } from './stats.js';

/** Ratios, targets and the markdown table of a run. */

const THROUGHPUT_LABELS: Record<ThroughputId, string> = {
  'bridge-h2': 'Bridge only, HTTP/2 (h2c)',
  'bridge-http1': 'Bridge only, HTTP/1.1 (chunked)',
  'gitaly-direct': 'Gitaly direct (grpc-js client → mock Gitaly, no bridge; diagnostic)',
  'grpc-floor': 'gRPC floor (grpc-js ↔ grpc-js, no git)',
};

const TARGET_IDLE_TUNNEL_KIB = 256;
const TARGET_SLOW_READER_MIB = 150;

function fmt(x: number | undefined, digits = 2, unit = ''): string {
  return x === undefined || !Number.isFinite(x) ? '–' : `${x.toFixed(digits)}${unit}`;
}

const times = (x: number | undefined) => fmt(x, 2, '×');
const seconds = (ms: number | undefined) => fmt(ms === undefined ? undefined : ms / 1000, 2, ' s');
const millis = (ms: number | undefined) => fmt(ms, 0, ' ms');
const mib = (kib: number | undefined) => fmt(kib === undefined ? undefined : kib / 1024, 1, ' MiB');
const size = (bytes: number) =>
  bytes >= 1024 * MIB ? `${(bytes / 1024 / MIB).toFixed(2)} GiB` : `${(bytes / MIB).toFixed(1)} MiB`;

function cell<T>(o: Outcome<T> | undefined, show: (v: T) => string): string {
  if (!o) return 'not run';
  return o.ok ? show(o.value) : '**FAILED**';
}

function largeMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.largeClone?.[id])?.medianMs;
}
function smallP50(r: BenchResults, id: GitContenderId) {
  return okValue(r.smallClone?.[id])?.p50;
}
function tput(r: BenchResults, id: ThroughputId) {
  return okValue(r.throughput?.[id])?.medianMiBps;
}

/** Fills `ratios` and `targets` from the measurements. */
export function evaluate(r: BenchResults): void {
  const idle = okValue(r.idleMemory);
  const ratios: Ratio[] = [
    {
      name: 'cells-path / OpenSSH, large clone wall time',
      value: ratio(largeMedian(r, 'cells'), largeMedian(r, 'openssh')),
    },
    {
      name: 'cells-path / direct, large clone wall time',
      value: ratio(largeMedian(r, 'cells'), largeMedian(r, 'direct')),
    },
    {
      name: 'cells-path / OpenSSH, small clone p50',
      value: ratio(smallP50(r, 'cells'), smallP50(r, 'openssh')),
    },
    {
      name: 'cells-path / direct, small clone p50',
      value: ratio(smallP50(r, 'cells'), smallP50(r, 'direct')),
    },
    {
      name: 'bridge-only (HTTP/2) / gRPC floor, throughput',
      value: ratio(tput(r, 'bridge-h2'), tput(r, 'grpc-floor')),
    },
    {
      name: 'bridge-only (HTTP/1.1) / gRPC floor, throughput',
      value: ratio(tput(r, 'bridge-http1'), tput(r, 'grpc-floor')),
    },
    {
      name: 'bridge-only (HTTP/2) / Gitaly direct, throughput (the bridge’s own cost)',
      value: ratio(tput(r, 'bridge-h2'), tput(r, 'gitaly-direct')),
    },
  ];
  r.ratios = ratios;
  const at = (name: string) => ratios.find((x) => x.name === name)?.value;
  const maxLevel = Math.max(...r.settings.concurrency);
  const conc = okValue(r.concurrency?.find((c) => c.level === maxLevel)?.results.cells);
  const concErrors = r.concurrency?.find((c) => c.level === maxLevel)?.results.cells;
  const slowBridge = okValue(r.slowReader?.bridge)?.peakKiB.bridge;
  const slowRouter = okValue(r.slowReader?.router)?.peakKiB;
  const slowPeak =
    slowBridge === undefined && slowRouter === undefined
      ? undefined
      : Math.max(slowBridge ?? 0, slowRouter?.router ?? 0, slowRouter?.bridge ?? 0);
  const le = (v: number | undefined, limit: number) => (v === undefined ? undefined : v <= limit);
  const ge = (v: number | undefined, limit: number) => (v === undefined ? undefined : v >= limit);
  r.targets = [
    {
      name: 'Large clone ≤ 1.10× OpenSSH wall time',
      measured: times(at('cells-path / OpenSSH, large clone wall time')),
      met: le(at('cells-path / OpenSSH, large clone wall time'), 1.1),
    },
    {
      name: 'Small clone p50 ≤ 1.5× OpenSSH',
      measured: times(at('cells-path / OpenSSH, small clone p50')),
      met: le(at('cells-path / OpenSSH, small clone p50'), 1.5),
    },
    {
      name: 'Bridge-only throughput ≥ 50 % of the gRPC floor (HTTP/2)',
      measured: fmt((at('bridge-only (HTTP/2) / gRPC floor, throughput') ?? Number.NaN) * 100, 0, ' %'),
      met: ge(at('bridge-only (HTTP/2) / gRPC floor, throughput'), 0.5),
    },
    {
      name: 'Bridge-only throughput ≥ 50 % of the gRPC floor (HTTP/1.1)',
      measured: fmt((at('bridge-only (HTTP/1.1) / gRPC floor, throughput') ?? Number.NaN) * 100, 0, ' %'),
      met: ge(at('bridge-only (HTTP/1.1) / gRPC floor, throughput'), 0.5),
    },
    {
      name: `≤ ${TARGET_IDLE_TUNNEL_KIB} KiB RSS per idle tunnel in the bridge`,
      measured: fmt(idle?.perTunnelKiB.bridge, 0, ' KiB'),
      met: le(idle?.perTunnelKiB.bridge, TARGET_IDLE_TUNNEL_KIB),
    },
    {
      name: `RSS < ${TARGET_SLOW_READER_MIB} MiB during the slow-reader test (router and bridge peak)`,
      measured: mib(slowPeak),
      met: slowPeak === undefined ? undefined : slowPeak / 1024 < TARGET_SLOW_READER_MIB,
    },
    {
      name: `Zero errors at ${maxLevel} concurrent clones`,
      measured: concErrors ? (conc ? `${conc.errors} errors` : 'FAILED') : '–',
      met: concErrors ? conc?.errors === 0 : undefined,
    },
  ];
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
    `Machine: ${m.cpuCount} × ${m.cpuModel}, ${(m.memoryBytes / 1024 ** 3).toFixed(1)} GiB RAM, ${m.os}; Node ${m.node}, ${m.git}, ${m.opensshClient}, server ${m.opensshServer}. Load average (1 min) ${r.run.loadAverage.start} at the start, ${r.run.loadAverage.end ?? '–'} at the end.`,
    `Repositories: large ${size(r.repos.large.packBytes)} pack (${r.repos.large.files} incompressible files), small ${size(r.repos.small.packBytes)} pack, slow-reader ${size(r.repos.slow.packBytes)} pack, push ${size(r.repos.push.files * r.repos.push.fileBytes)} of new objects.`,
    '',
    '**Git over three paths** (`git clone --bare` / `git push`, same client, same bare repositories)',
    '',
  );
  head(['workload', ...GIT_CONTENDERS.map((c) => CONTENDER_LABELS[c]), 'cells / OpenSSH', 'cells / direct']);
  const gitRow = (
    label: string,
    pick: (id: GitContenderId) => number | undefined,
    show: (x: number | undefined) => string,
    outcome: (id: GitContenderId) => Outcome<unknown> | undefined,
    ratios = true,
  ) => {
    const values = GIT_CONTENDERS.map((id) => cell(outcome(id), () => show(pick(id))));
    const extra = ratios
      ? [times(ratio(pick('cells'), pick('openssh'))), times(ratio(pick('cells'), pick('direct')))]
      : ['', ''];
    row([label, ...values, ...extra]);
  };
  const lc = (id: GitContenderId) => r.largeClone?.[id];
  gitRow(
    `Large clone, wall time (median of ${r.settings.largeCloneRuns})`,
    (id) => okValue(lc(id))?.medianMs,
    seconds,
    lc,
  );
  gitRow(
    'Large clone, machine CPU per clone',
    (id) => {
      const cpu = okValue(lc(id))?.cpu.map((c) => c.machine);
      return cpu && cpu.length > 0 ? (cpu.reduce((a, b) => a + b, 0) / cpu.length) * 1000 : undefined;
    },
    seconds,
    lc,
  );
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
  head(['contender', 'MiB/s', 'vs gRPC floor', 'CPU s per GiB (by process)']);
  const floor = tput(r, 'grpc-floor');
  for (const id of ['bridge-h2', 'bridge-http1', 'gitaly-direct', 'grpc-floor'] as const) {
    const o = r.throughput?.[id];
    const v = okValue(o);
    const perGiB = v
      ? Object.entries(v.cpuPerGiB)
          .map(([k, s]) => `${k} ${s.toFixed(2)}`)
          .join(', ')
      : '';
    row([
      THROUGHPUT_LABELS[id],
      cell(o, (x) => fmt(x.medianMiBps, 0)),
      v ? times(ratio(v.medianMiBps, floor)) : '–',
      perGiB,
    ]);
  }

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

  lines.push('', '**Targets**', '');
  head(['target', 'measured', 'status']);
  for (const t of r.targets) row([t.name, t.measured, yesNo(t.met)]);

  const serverCpu = (['openssh', 'cells'] as const)
    .map((id) => {
      const v = okValue(lc(id));
      if (!v || v.cpu.length === 0) return undefined;
      const names = Object.keys(v.cpu[0]?.processes ?? {});
      const parts = names.map(
        (n) => `${n} ${(v.cpu.reduce((a, c) => a + (c.processes[n] ?? 0), 0) / v.cpu.length).toFixed(2)} s`,
      );
      return `${CONTENDER_LABELS[id]}: ${parts.join(', ')}`;
    })
    .filter(Boolean);
  if (serverCpu.length > 0) {
    lines.push(
      '',
      `Server-side CPU per large clone (child processes such as git included): ${serverCpu.join('; ')}.`,
    );
  }
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
