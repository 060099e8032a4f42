import type { RepoSpec } from './repo-gen.js';

/** What one run measures and how much of it. `--quick` is the CI smoke test (under two minutes). */
export interface BenchOptions {
  mode: 'full' | 'quick';
  /** Write CPU profiles of every stack service (`--cpu-prof`) and summarize them. */
  profile: boolean;
  /** Workloads to run (all by default). */
  only: ReadonlySet<WorkloadId>;
  largeRepo: RepoSpec;
  smallRepo: RepoSpec;
  /** Repository streamed to the slow reader (≥ 1 GiB in full mode). */
  slowRepo: RepoSpec;
  /** New objects pushed on top of the small repository. */
  pushObjects: RepoSpec;
  /** A realistic history (thousands of commits of edited text files: deltas and delta chains). */
  historyRepo: RepoSpec;
  largeCloneRuns: number;
  sequentialClones: number;
  concurrency: readonly number[];
  pushRuns: number;
  idleTunnels: number;
  throughputRuns: number;
  /** Bytes per second the slow reader consumes. */
  slowReadRate: number;
  /** Upper bound of any single git operation. */
  opTimeoutMs: number;
  /** World start-up (`world-startup.ts`): the cell counts of the worlds started. */
  worldCells: readonly number[];
  /** The router's leg to the cells (`ROUTER_CELL_PROTOCOL`); undefined = the router's default (`http1`). */
  cellProtocol: 'http1' | 'h2c' | undefined;
  /** fcgiwrap processes of the nginx contender (each runs one git http-backend at a time). */
  fcgiChildren: number;
  /** Concurrent small clones of each scale-out burst (two routers behind HAProxy). */
  scaleOutClones: number;
  /** Fresh stack starts of the `fresh-stacks` workload (one large clone each). */
  freshStarts: number;
  /**
   * How long each fresh stack idles after its warm-up clone, before the large clone: past V8's memory
   * reducer (8 s after start-up), which changed how the router's heap grows (stack/node-flags.ts).
   */
  freshIdleMs: number;
}

export const WORKLOADS = [
  'memory',
  'slow-reader',
  'throughput',
  'large-clone',
  'history-clone',
  'small-clone',
  'concurrency',
  'push',
  'scale-out',
  'fresh-stacks',
  'world-startup',
] as const;
export type WorkloadId = (typeof WORKLOADS)[number];

const KIB = 1024;
const MIB = 1024 * KIB;

function binaryRepo(name: string, totalMiB: number): RepoSpec {
  const fileBytes = 256 * KIB;
  return {
    name,
    seed: `cells-bench-${name}-v1`,
    files: Math.ceil((totalMiB * MIB) / fileBytes),
    fileBytes,
    filesPerCommit: 32,
    text: false,
  };
}

const SMALL: RepoSpec = {
  name: 'small',
  seed: 'cells-bench-small-v1',
  files: 120,
  fileBytes: 1024,
  filesPerCommit: 4,
  text: true,
};

function historyRepo(commits: number, files: number): RepoSpec {
  return {
    name: 'history',
    seed: 'cells-bench-history-v1',
    files,
    fileBytes: 12 * KIB,
    filesPerCommit: 0,
    text: true,
    history: { commits, editsPerCommit: 3, maxLineEdits: 6 },
  };
}

export class UsageError extends Error {}

export const USAGE = `usage: npm run bench -- [--quick] [--profile] [--only ${WORKLOADS.join(',')}]

  --quick     small counts, a ~20 MiB repository and a short history (CI smoke test, under two minutes)
  --profile   run the stack's services with --cpu-prof and print where their CPU time goes
  --only      comma-separated subset of the workloads
  --large-clone-runs N
              rounds of the large and history clones (default: 1 quick, 5 full)
  --cell-protocol http1|h2c
              the router's tunnel leg to the cells (default: the router's, http1)
  --fcgi-children N
              fcgiwrap processes behind the nginx contender (default: the highest concurrency level)
  --scale-out-clones N
              concurrent clones of each scale-out burst (default: 40 quick, 1000 full)`;

/** What the command line says, before the mode's defaults are applied. */
interface Flags {
  quick: boolean;
  profile: boolean;
  only: Set<WorkloadId>;
  cellProtocol: BenchOptions['cellProtocol'];
  largeCloneRuns: number | undefined;
  fcgiChildren: number | undefined;
  scaleOutClones: number | undefined;
}

function positiveInteger(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} needs a positive integer`);
  return n;
}

function workloadList(value: string | undefined): Set<WorkloadId> {
  if (!value) throw new UsageError('--only needs a list of workloads');
  const ids = value.split(',').map((s) => s.trim());
  const unknown = ids.filter((id) => !(WORKLOADS as readonly string[]).includes(id));
  if (unknown.length > 0) throw new UsageError(`unknown workload(s): ${unknown.join(', ')}`);
  return new Set(ids as WorkloadId[]);
}

function parseFlags(argv: readonly string[]): Flags {
  const f: Flags = {
    quick: false,
    profile: false,
    only: new Set(WORKLOADS),
    cellProtocol: undefined,
    largeCloneRuns: undefined,
    fcgiChildren: undefined,
    scaleOutClones: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') f.quick = true;
    else if (arg === '--profile') f.profile = true;
    else if (arg === '--only') f.only = workloadList(argv[++i]);
    else if (arg?.startsWith('--only=')) f.only = workloadList(arg.slice('--only='.length));
    else if (arg === '--cell-protocol') {
      const value = argv[++i];
      if (value !== 'http1' && value !== 'h2c') throw new UsageError('--cell-protocol is http1 or h2c');
      f.cellProtocol = value;
    } else if (arg === '--large-clone-runs') f.largeCloneRuns = positiveInteger(arg, argv[++i]);
    else if (arg === '--fcgi-children') f.fcgiChildren = positiveInteger(arg, argv[++i]);
    else if (arg === '--scale-out-clones') f.scaleOutClones = positiveInteger(arg, argv[++i]);
    else if (arg === '--help' || arg === '-h') throw new UsageError('');
    else throw new UsageError(`unknown argument ${arg}`);
  }
  return f;
}

/** `--quick`: small counts and a ~20 MiB repository (the CI smoke test). */
function quickOptions(f: Flags): BenchOptions {
  const large = binaryRepo('large', 20);
  return {
    mode: 'quick',
    profile: f.profile,
    only: f.only,
    largeRepo: large,
    smallRepo: SMALL,
    slowRepo: large,
    pushObjects: binaryRepo('push', 8),
    historyRepo: historyRepo(300, 60),
    largeCloneRuns: f.largeCloneRuns ?? 1,
    sequentialClones: 20,
    concurrency: [5, 10],
    pushRuns: 1,
    idleTunnels: 10,
    throughputRuns: 1,
    slowReadRate: 16 * MIB,
    opTimeoutMs: 60_000,
    worldCells: [3],
    cellProtocol: f.cellProtocol,
    fcgiChildren: f.fcgiChildren ?? 10,
    scaleOutClones: f.scaleOutClones ?? 40,
    freshStarts: 5,
    freshIdleMs: 0,
  };
}

function fullOptions(f: Flags): BenchOptions {
  return {
    mode: 'full',
    profile: f.profile,
    only: f.only,
    largeRepo: binaryRepo('large', 216),
    smallRepo: SMALL,
    slowRepo: binaryRepo('huge', 1024),
    pushObjects: binaryRepo('push', 100),
    historyRepo: historyRepo(12_000, 1000),
    largeCloneRuns: f.largeCloneRuns ?? 5,
    sequentialClones: 200,
    concurrency: [50, 500],
    pushRuns: 3,
    idleTunnels: 100,
    throughputRuns: 5,
    slowReadRate: 64 * MIB,
    opTimeoutMs: 15 * 60_000,
    worldCells: [3, 4, 10],
    cellProtocol: f.cellProtocol,
    fcgiChildren: f.fcgiChildren ?? 500,
    scaleOutClones: f.scaleOutClones ?? 1000,
    freshStarts: 5,
    freshIdleMs: 12_000,
  };
}

export function parseArgs(argv: readonly string[]): BenchOptions {
  const f = parseFlags(argv);
  return f.quick ? quickOptions(f) : fullOptions(f);
}
