import type { FreshStacksResult } from './fresh-stacks.js';
import type { GitContenderId, LargeCloneResult, PushResult } from './git-workloads.js';
import type { MachineInfo, RunInfo } from './machine.js';
import type { Failure, Outcome } from './outcome.js';
import type { ScaleOutResult } from './scale-out.js';
import type { ConcurrencyResult, SmallCloneResult } from './small-clones.js';
import type { AesGcmId, SshAlgorithms, SshVariant } from './ssh-ciphers.js';
import type { IdleMemoryResult, SlowReadResult } from './stack-workloads.js';
import type { ThroughputResult } from './throughput-runs.js';
import type { WorldStartupResult } from './world-startup.js';

/** Everything one run measured: the JSON written to bench/results/ and the input of the markdown report. */
export interface RepoFacts {
  packBytes: number;
  files: number;
  fileBytes: number;
}

/**
 * Throughput contenders: the bridge alone (HTTP/2, HTTP/1.1) with its default sidechannel towards
 * Gitaly and, as `-stream`, a second bridge in `gitalyUploadPack: "stream"` mode; the bridge's
 * Gitaly client without the bridge in both modes; the grpc-js floor.
 */
export type ThroughputId =
  | 'bridge-h2'
  | 'bridge-http1'
  | 'bridge-h2-stream'
  | 'bridge-http1-stream'
  | 'gitaly-direct'
  | 'gitaly-direct-stream'
  | 'grpc-floor';

export interface BenchResults {
  mode: 'full' | 'quick';
  run: RunInfo;
  machine: MachineInfo;
  settings: {
    largeCloneRuns: number;
    sequentialClones: number;
    concurrency: readonly number[];
    pushRuns: number;
    idleTunnels: number;
    throughputRuns: number;
    slowReadRateMiBps: number;
    /** Environment given to the stack's services for the run. */
    stackEnv: Record<string, string>;
    /** Key exchange and cipher `ssh` negotiated with each SSH contender, as the client picks them and with `-c aes128-gcm@openssh.com`. */
    ssh: Partial<Record<SshVariant, SshAlgorithms>>;
  };
  repos: {
    large: RepoFacts;
    small: RepoFacts;
    slow: RepoFacts;
    push: RepoFacts;
    /** Absent in results written before the realistic-history workload existed. */
    history?: RepoFacts & { commits: number };
  };
  /** The large clone, each SSH contender with the cipher the client picks (`settings.ssh`). */
  largeClone?: Record<GitContenderId, Outcome<LargeCloneResult>>;
  /** The large clone of OpenSSH and the cells path with `-c aes128-gcm@openssh.com` (absent before it existed). */
  largeCloneAesGcm?: Partial<Record<AesGcmId, Outcome<LargeCloneResult>>>;
  /** Clones of the realistic history (many commits, deltas and delta chains). */
  historyClone?: Record<GitContenderId, Outcome<LargeCloneResult>>;
  smallClone?: Record<GitContenderId, Outcome<SmallCloneResult>>;
  concurrency?: Array<{ level: number; results: Record<GitContenderId, Outcome<ConcurrencyResult>> }>;
  push?: Record<GitContenderId, Outcome<PushResult>>;
  throughput?: Partial<Record<ThroughputId, Outcome<ThroughputResult>>>;
  idleMemory?: Outcome<IdleMemoryResult>;
  slowReader?: { bridge: Outcome<SlowReadResult>; router: Outcome<SlowReadResult> };
  /** Two routers behind HAProxy (`scale-out.ts`); absent in results written before it existed. */
  scaleOut?: Outcome<ScaleOutResult>;
  /** The large clone on fresh stacks, router CPU per start (`fresh-stacks.ts`). */
  freshStacks?: Outcome<FreshStacksResult>;
  /** Worlds of N cells started from a topology file (`world-startup.ts`), first and warm. */
  worldStartup?: Outcome<WorldStartupResult[]>;
  failures: Failure[];
  /** Filled from the results by `evaluate`. */
  ratios: Ratio[];
  targets: Target[];
  notes: string[];
}

export interface Ratio {
  name: string;
  value: number | undefined;
}

export interface Target {
  name: string;
  measured: string;
  met: boolean | undefined;
}
