/** @file What one run sets before any workload: the services' environment, git's, the empty results. */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { facts, ROOT } from './bench-data.js';
import { machineInfo, runInfo } from './machine.js';
import { benchNotes } from './notes.js';
import type { BenchOptions } from './options.js';
import type { FailureLog } from './outcome.js';
import type { GeneratedRepo } from './repo-gen.js';
import type { BenchResults } from './results.js';
import { MIB } from './stats.js';

/** The environment of the stack's services for a run (`profileDir`: where `--profile` writes). */
export function benchStackEnv(opts: BenchOptions, profileDir: string): Record<string, string> {
  // One benchmark user opens up to max(concurrency, idle tunnels) tunnels at once: lift the
  // bridge's per-user cap (off by default; kept off explicitly) so the workload, not a policy, is measured. The mock
  // Gitalys also serve the bidi SSHUploadPack (beside the sidechannel) for the stream contenders.
  // No Geo secondary: its replication of every benchmark push would load the machine meanwhile.
  // The router's startups cap is the private sshd's (`MaxStartups 1000`), whatever its default.
  const env: Record<string, string> = {
    BRIDGE_MAX_TUNNELS_PER_USER: '0',
    GITALY_LEGACY_UPLOAD_PACK: 'true',
    STACK_GEO: 'off',
    ROUTER_MAX_STARTUPS: '1000',
  };
  if (opts.cellProtocol) env.ROUTER_CELL_PROTOCOL = opts.cellProtocol;
  if (opts.profile) {
    env.NODE_OPTIONS = `--import=${pathToFileURL(join(ROOT, 'dist', 'bench', 'cpu-profiler.js')).href}`;
    env.BENCH_PROFILE_DIR = profileDir;
  }
  return env;
}

/** The git client's environment: no user or system config, no prompts, its own home. */
export function gitBaseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
  };
}

export type RunRepos = Record<'large' | 'small' | 'slow' | 'pushSource' | 'history', GeneratedRepo>;

/** The results before any workload ran: the run, the machine, the settings and the repositories. */
export function emptyResults(
  o: BenchOptions,
  stackEnv: Record<string, string>,
  failures: FailureLog,
  repos: RunRepos,
  ssh: BenchResults['settings']['ssh'],
): BenchResults {
  const results: BenchResults = {
    mode: o.mode,
    run: runInfo(),
    machine: machineInfo(),
    settings: {
      largeCloneRuns: o.largeCloneRuns,
      sequentialClones: o.sequentialClones,
      concurrency: o.concurrency,
      pushRuns: o.pushRuns,
      idleTunnels: o.idleTunnels,
      throughputRuns: o.throughputRuns,
      slowReadRateMiBps: o.slowReadRate / MIB,
      stackEnv,
      ssh,
    },
    repos: {
      large: facts(repos.large),
      small: facts(repos.small),
      slow: facts(repos.slow),
      push: facts(repos.pushSource),
      history: { ...facts(repos.history), commits: (o.historyRepo.history?.commits ?? 0) + 1 },
    },
    failures: failures.failures,
    ratios: [],
    targets: [],
    notes: benchNotes(o, stackEnv, repos.slow),
  };
  results.repos.push = { ...facts(repos.pushSource), files: o.pushObjects.files };
  return results;
}
