import type { GitContenderId } from './git-workloads.js';
import { okValue } from './outcome.js';
import { fmt, mib, times } from './report-format.js';
import { freshStackTargets } from './report-fresh-stacks.js';
import { ratiosOf } from './report-ratios.js';
import { scaleOutTargets } from './report-scale-out.js';
import { defaultCipherSuffix } from './report-values.js';
import type { BenchResults, Ratio, Target } from './results.js';

/** Issue 14's (and issue 24's, over HTTP) targets, each with its measured value and met / missed, filled into a run's results. */

const TARGET_IDLE_KIB = { bridge: 64, router: 128 } as const;
const TARGET_SLOW_READER_MIB = 150;

const le = (v: number | undefined, limit: number) => (v === undefined ? undefined : v <= limit);
const ge = (v: number | undefined, limit: number) => (v === undefined ? undefined : v >= limit);
const percent = (x: number | undefined) => fmt(x === undefined ? undefined : x * 100, 0, ' %');

function memoryTargets(r: BenchResults): Target[] {
  const idle = okValue(r.idleMemory);
  const peaks = [okValue(r.slowReader?.bridge)?.peakKiB, okValue(r.slowReader?.router)?.peakKiB];
  const all = peaks.flatMap((p) => Object.entries(p ?? {}));
  const top = all.reduce<[string, number] | undefined>((m, e) => (m && m[1] >= e[1] ? m : e), undefined);
  const idleTarget = (p: 'bridge' | 'router'): Target => ({
    name: `RSS per idle tunnel ≤ ${TARGET_IDLE_KIB[p]} KiB in the ${p}`,
    measured: fmt(idle?.perTunnelKiB[p], 0, ' KiB'),
    met: le(idle?.perTunnelKiB[p], TARGET_IDLE_KIB[p]),
  });
  return [
    idleTarget('bridge'),
    idleTarget('router'),
    {
      name: `Slow reader of ${(r.repos.slow.packBytes / 2 ** 30).toFixed(2)} GiB: peak RSS < ${TARGET_SLOW_READER_MIB} MiB in every process`,
      measured: top ? `${mib(top[1])} (${top[0]})` : '–',
      met: top === undefined ? undefined : top[1] / 1024 < TARGET_SLOW_READER_MIB,
    },
  ];
}

/** Issue 22's bar: a router developer can start a 3-cell world per test file. */
function worldTargets(r: BenchResults): Target[] {
  const three = okValue(r.worldStartup)?.find((w) => w.cells === 3);
  return [
    {
      name: 'World of 3 cells ready ≤ 3 s (warm start)',
      measured: fmt(three?.warmMs, 0, ' ms'),
      met: le(three?.warmMs, 3000),
    },
    {
      name: 'World of 3 cells: RSS of the whole world (all its processes) ≤ 600 MiB',
      measured: fmt(three?.rssMiB, 0, ' MiB'),
      met: le(three?.rssMiB, 600),
    },
  ];
}

function concurrencyTargets(r: BenchResults, p99Ratio: number | undefined): Target[] {
  const top = Math.max(...r.settings.concurrency);
  const results = r.concurrency?.find((c) => c.level === top)?.results;
  const errors = (id: GitContenderId) => {
    const o = results?.[id];
    return o ? (okValue(o)?.errors ?? 'FAILED') : undefined;
  };
  const cells = errors('cells');
  const http = errors('cells-http');
  return [
    {
      name: `${top} concurrent small HTTP clones: zero errors`,
      measured: http === undefined ? '–' : `${http} errors (nginx ${errors('nginx') ?? '–'})`,
      met: http === undefined ? undefined : http === 0,
    },
    {
      name: `${top} concurrent small clones: zero errors`,
      measured: cells === undefined ? '–' : `${cells} errors (OpenSSH ${errors('openssh') ?? '–'})`,
      met: cells === undefined ? undefined : cells === 0,
    },
    {
      name: `${top} concurrent small clones: p99 ≤ OpenSSH’s p99`,
      measured: times(p99Ratio),
      met: le(p99Ratio, 1),
    },
  ];
}

/** Issue 24's bars for git over HTTP: the cells path's HTTP front against nginx + git http-backend. */
function httpTargets(
  atMost: (
    name: string,
    k: 'httpLargeVsNginx' | 'httpSmallVsNginx' | 'httpPushVsNginx',
    limit: number,
  ) => Target,
  bridgeHttpVsSsh: number | undefined,
): Target[] {
  return [
    atMost('HTTP large clone: wall time ≤ 1.15× nginx + git http-backend', 'httpLargeVsNginx', 1.15),
    atMost('HTTP small clone p50 ≤ 1.0× nginx + git http-backend', 'httpSmallVsNginx', 1),
    atMost('HTTP push (with hooks) ≤ 1.15× nginx + git http-backend', 'httpPushVsNginx', 1.15),
    {
      name: 'Bridge CPU per GiB over HTTP reported beside the SSH tunnel’s (HTTP / SSH)',
      measured: times(bridgeHttpVsSsh),
      met: bridgeHttpVsSsh === undefined ? undefined : true,
    },
  ];
}

/** Fills `ratios` and `targets` from the measurements. */
export function evaluate(r: BenchResults): void {
  const x = ratiosOf(r);
  r.ratios = Object.values(x).map(([name, value]): Ratio => ({ name, value }));
  const v = (k: keyof typeof x) => x[k][1];
  const atMost = (name: string, k: keyof typeof x, limit: number): Target => ({
    name,
    measured: times(v(k)),
    met: le(v(k), limit),
  });
  const share = (name: string, k: keyof typeof x, limit: number): Target => ({
    name,
    measured: percent(v(k)),
    met: ge(v(k), limit),
  });
  const history = [v('historyVsSsh'), v('historyCpuVsSsh')];
  const cipher = defaultCipherSuffix(r);
  r.targets = [
    atMost(`Large clone: wall time ≤ 1.25× OpenSSH${cipher}`, 'largeVsSsh', 1.25),
    atMost(`Large clone: machine CPU per clone ≤ 1.30× OpenSSH${cipher}`, 'largeCpuVsSsh', 1.3),
    atMost('Large clone: wall time ≤ 1.25× OpenSSH (AES-GCM)', 'largeVsSshAesGcm', 1.25),
    atMost('Large clone: machine CPU per clone ≤ 1.30× OpenSSH (AES-GCM)', 'largeCpuVsSshAesGcm', 1.3),
    atMost('Push (with hooks) ≤ 1.15× OpenSSH', 'pushVsSsh', 1.15),
    atMost(
      'Router CPU per GiB served ≤ 1.5× the OpenSSH server’s own processes (git apart)',
      'routerVsSshd',
      1.5,
    ),
    atMost(
      'Bridge CPU per GiB served ≤ 0.5× the OpenSSH server’s own processes (git apart)',
      'bridgeVsSshd',
      0.5,
    ),
    {
      name: 'Bridge only: HTTP/2 ≥ HTTP/1.1 (sidechannel)',
      measured: times(v('h2VsH1')),
      met: ge(v('h2VsH1'), 1),
    },
    share('Bridge only, HTTP/2: ≥ 85 % of Gitaly direct (sidechannel)', 'h2VsDirect', 0.85),
    share('Bridge only, HTTP/1.1: ≥ 85 % of Gitaly direct (sidechannel)', 'h1VsDirect', 0.85),
    atMost('Small clone p50 ≤ 0.8× OpenSSH', 'smallVsSsh', 0.8),
    ...httpTargets(atMost, v('bridgeHttpVsSsh')),
    ...concurrencyTargets(r, v('concurrentP99VsSsh')),
    ...memoryTargets(r),
    ...scaleOutTargets(r.scaleOut),
    ...freshStackTargets(r),
    ...worldTargets(r),
    {
      name: 'Realistic-history clone: ratios reported beside the incompressible one (wall, machine CPU)',
      measured: `wall ${times(history[0])}, CPU ${times(history[1])}`,
      met: history.every((h) => h !== undefined) ? true : undefined,
    },
  ];
}
