import type { UploadPackMode } from '../lib/gitaly/index.js';
import type { BridgeProtocol } from './bridge-client.js';
import type { GitalyDirect } from './gitaly-direct.js';
import type { GrpcFloor } from './grpc-floor.js';
import type { FailureLog, Outcome } from './outcome.js';
import type { ThroughputId } from './results.js';
import type { BenchStack } from './stack-runner.js';
import { MIB } from './stats.js';
import {
  type BridgeEndpoint,
  bridgeThroughputRun,
  floorThroughputRun,
  gitalyThroughputRun,
  summarizeThroughput,
  type ThroughputResult,
  type ThroughputRun,
  type ThroughputTarget,
} from './throughput-runs.js';

/** The throughput table's rows, in the order they run within a round and are reported. */
export const THROUGHPUT_LABELS: Record<ThroughputId, string> = {
  'bridge-h2': 'Bridge only, HTTP/2 (h2c), sidechannel',
  'bridge-http1': 'Bridge only, HTTP/1.1 (chunked), sidechannel',
  'bridge-h2-stream': 'Bridge only, HTTP/2 (h2c), stream mode',
  'bridge-http1-stream': 'Bridge only, HTTP/1.1 (chunked), stream mode',
  'gitaly-direct': 'Gitaly direct, sidechannel (lib/gitaly client → mock Gitaly, no bridge; diagnostic)',
  'gitaly-direct-stream': 'Gitaly direct, stream (bidi SSHUploadPack; diagnostic)',
  'grpc-floor': 'gRPC floor (grpc-js ↔ grpc-js, no git)',
};
export const THROUGHPUT_IDS = Object.keys(THROUGHPUT_LABELS) as ThroughputId[];

/** What the throughput contenders run against; a missing part makes its contenders fail with `why`. */
export interface ThroughputSetup {
  stack: BenchStack | undefined;
  /** The stack's bridge of the cell (sidechannel) and the benchmark's stream-mode one. */
  bridges: Record<UploadPackMode, BridgeEndpoint | undefined>;
  direct: Record<UploadPackMode, GitalyDirect | undefined>;
  floor: GrpcFloor | undefined;
  why: Record<'stack' | 'streamBridge' | 'floor', string>;
}

export interface ThroughputPlan {
  big: ThroughputTarget;
  /** The untimed warm-up fetch (the small repository; 1 MiB for the floor). */
  small: ThroughputTarget;
  rounds: number;
  timeoutMs: number;
  failures: FailureLog;
  log(line: string): void;
}

type Runner = (t: ThroughputTarget, timeoutMs: number) => Promise<ThroughputRun>;

const unavailable =
  (why: string): Runner =>
  () =>
    Promise.reject(new Error(why));

function bridgeRunner(s: ThroughputSetup, mode: UploadPackMode, protocol: BridgeProtocol): Runner {
  const stack = s.stack;
  const bridge = s.bridges[mode];
  if (!stack) return unavailable(s.why.stack);
  if (!bridge) return unavailable(s.why.streamBridge);
  return (t, ms) => bridgeThroughputRun(stack, bridge, protocol, t, ms);
}

function directRunner(s: ThroughputSetup, mode: UploadPackMode): Runner {
  const stack = s.stack;
  const direct = s.direct[mode];
  if (!stack || !direct) return unavailable(s.why.stack);
  return (t, ms) => gitalyThroughputRun(stack, direct, t, ms);
}

/** The floor streams as many bytes as the HTTP/2 bridge delivered (the pack size until it did). */
function floorRunner(s: ThroughputSetup, bytes: () => number): Runner {
  const floor = s.floor;
  if (!floor) return unavailable(s.why.floor);
  return (t, ms) => floorThroughputRun(floor, t.packBytes === 0 ? MIB : bytes(), ms);
}

/** Every contender: one untimed warm-up each, then `rounds` rounds, contenders interleaved within a round. */
export async function runThroughput(
  s: ThroughputSetup,
  plan: ThroughputPlan,
): Promise<Partial<Record<ThroughputId, Outcome<ThroughputResult>>>> {
  let floorBytes = plan.big.packBytes;
  const runners: Record<ThroughputId, Runner> = {
    'bridge-h2': bridgeRunner(s, 'sidechannel', 'h2'),
    'bridge-http1': bridgeRunner(s, 'sidechannel', 'http1'),
    'bridge-h2-stream': bridgeRunner(s, 'stream', 'h2'),
    'bridge-http1-stream': bridgeRunner(s, 'stream', 'http1'),
    'gitaly-direct': directRunner(s, 'sidechannel'),
    'gitaly-direct-stream': directRunner(s, 'stream'),
    'grpc-floor': floorRunner(s, () => floorBytes),
  };
  const runs = new Map<ThroughputId, ThroughputRun[]>(THROUGHPUT_IDS.map((id) => [id, []]));
  const failed = new Map<ThroughputId, string>();
  const fail = (id: ThroughputId, what: string, err: unknown) =>
    failed.set(id, plan.failures.record(`throughput, ${THROUGHPUT_LABELS[id]}${what}`, err));
  plan.log(`throughput: ${plan.rounds} round(s) of ${THROUGHPUT_IDS.join(', ')}`);
  for (const id of THROUGHPUT_IDS) {
    await runners[id](plan.small, 60_000).catch((err: unknown) => fail(id, ' (warm-up)', err));
  }
  for (let round = 0; round < plan.rounds; round++) {
    for (const id of THROUGHPUT_IDS) {
      if (failed.has(id)) continue;
      try {
        const r = await runners[id](plan.big, plan.timeoutMs);
        runs.get(id)?.push(r);
        if (id === 'bridge-h2') floorBytes = r.bytes;
        plan.log(`${THROUGHPUT_LABELS[id]}: ${r.mibps.toFixed(0)} MiB/s`);
      } catch (err) {
        fail(id, '', err);
      }
    }
  }
  const out: Partial<Record<ThroughputId, Outcome<ThroughputResult>>> = {};
  for (const id of THROUGHPUT_IDS) {
    const error = failed.get(id);
    out[id] = error ? { ok: false, error } : { ok: true, value: summarizeThroughput(runs.get(id) ?? []) };
  }
  return out;
}
