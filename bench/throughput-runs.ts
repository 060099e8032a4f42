/** @file One throughput run (bridge only, Gitaly direct, the gRPC floor): bytes, time, CPU by process. */
import { type BridgeProtocol, uploadPack } from './bridge-client.js';
import type { GitalyDirect } from './gitaly-direct.js';
import type { GrpcFloor } from './grpc-floor.js';
import { type CpuCounter, CpuMeter, ownCpu, reapedChildrenCpu } from './proc.js';
import type { BenchStack } from './stack-runner.js';
import { shellJwt } from './stack-workloads.js';
import { median, mibPerSecond } from './stats.js';

export interface ThroughputRun {
  bytes: number;
  ms: number;
  mibps: number;
  /** CPU seconds of the processes on the path (this client included as `client`). */
  cpu: Record<string, number>;
}

export interface ThroughputResult {
  runs: ThroughputRun[];
  medianMiBps: number;
  /** CPU seconds per GiB delivered, by process, over all runs. */
  cpuPerGiB: Record<string, number>;
}

function clientCpu(): () => number {
  const start = process.cpuUsage();
  return () => {
    const d = process.cpuUsage(start);
    return (d.user + d.system) / 1e6;
  };
}

/** What a throughput run fetches; the response must carry at least `packBytes`. */
export interface ThroughputTarget {
  project: string;
  head: string;
  packBytes: number;
}

/** A bridge of the throughput repository's cell: the stack's own or one the benchmark started beside it. */
export interface BridgeEndpoint {
  url: string;
  pid: number;
}

/** The cell's mock Gitaly, its own CPU and that of the git processes it ran (reaped children). */
function gitalyCpu(stack: BenchStack): { counters: Record<string, CpuCounter>; pid: number } {
  const pid = stack.pid('gitaly-cell_us0');
  return { counters: { gitaly: ownCpu(pid), 'gitaly-git': reapedChildrenCpu(pid) }, pid };
}

async function measured(
  counters: Record<string, CpuCounter>,
  reapers: readonly number[],
  fetch: () => Promise<{ stdoutBytes: number; ms: number }>,
  packBytes: number,
): Promise<ThroughputRun> {
  const meter = new CpuMeter(counters, reapers);
  const client = clientCpu();
  const r = await fetch();
  const clientSeconds = client();
  const cpu = { ...(await meter.stopReaped()).processes, client: clientSeconds };
  if (r.stdoutBytes < packBytes) throw new Error(`only ${r.stdoutBytes} bytes for a ${packBytes}-byte pack`);
  return { bytes: r.stdoutBytes, ms: r.ms, mibps: mibPerSecond(r.stdoutBytes, r.ms) ?? 0, cpu };
}

/** One bridge-only fetch at full speed. */
export async function bridgeThroughputRun(
  stack: BenchStack,
  bridge: BridgeEndpoint,
  protocol: BridgeProtocol,
  target: ThroughputTarget,
  timeoutMs: number,
): Promise<ThroughputRun> {
  const gitaly = gitalyCpu(stack);
  const jwt = await shellJwt(stack, 'user-1');
  return measured(
    { bridge: ownCpu(bridge.pid), ...gitaly.counters },
    [gitaly.pid],
    () =>
      uploadPack(protocol, {
        bridgeUrl: bridge.url,
        project: target.project,
        wants: [target.head],
        jwt,
        timeoutMs,
      }),
    target.packBytes,
  );
}

/** One upload-pack straight from the cell's mock Gitaly (no bridge). */
export async function gitalyThroughputRun(
  stack: BenchStack,
  direct: GitalyDirect,
  target: ThroughputTarget,
  timeoutMs: number,
): Promise<ThroughputRun> {
  const gitaly = gitalyCpu(stack);
  return measured(
    gitaly.counters,
    [gitaly.pid],
    () => direct.uploadPack(target.project, [target.head], timeoutMs),
    target.packBytes,
  );
}

/** One gRPC-floor stream of `bytes`. */
export function floorThroughputRun(
  floor: GrpcFloor,
  bytes: number,
  timeoutMs: number,
): Promise<ThroughputRun> {
  return measured({ server: ownCpu(floor.pid) }, [], () => floor.stream(bytes, timeoutMs), 0);
}

export function summarizeThroughput(runs: ThroughputRun[]): ThroughputResult {
  const bytes = runs.reduce((a, r) => a + r.bytes, 0);
  const cpuPerGiB: Record<string, number> = {};
  for (const r of runs) {
    for (const [k, v] of Object.entries(r.cpu)) cpuPerGiB[k] = (cpuPerGiB[k] ?? 0) + v;
  }
  for (const k of Object.keys(cpuPerGiB)) cpuPerGiB[k] = ((cpuPerGiB[k] ?? 0) / bytes) * 1024 ** 3;
  return { runs, medianMiBps: median(runs.map((r) => r.mibps)) ?? 0, cpuPerGiB };
}
