/** @file The throughput workload's servers and its Gitaly-direct clients. */
import type { UploadPackMode } from '../lib/gitaly/index.js';
import { hashedRepoPath } from '../lib/repo-path.js';
import { readSecretFile } from '../lib/secrets.js';
import { demoWorld } from '../stack/topology-file-load.js';
import { log, PROJECTS } from './bench-data.js';
import { errorOf } from './contenders.js';
import { GitalyDirect } from './gitaly-direct.js';
import type { GrpcFloor } from './grpc-floor.js';
import type { BenchOptions } from './options.js';
import type { FailureLog, Outcome } from './outcome.js';
import type { GeneratedRepo } from './repo-gen.js';
import type { ThroughputId } from './results.js';
import type { BenchStack, ExtraBridge } from './stack-runner.js';
import { runThroughput } from './throughput.js';
import type { ThroughputResult } from './throughput-runs.js';

/** What `benchThroughput` measures against. */
export interface ThroughputServers {
  stack: BenchStack | undefined;
  streamBridge: ExtraBridge | undefined;
  streamBridgeStart: Outcome<void>;
  floor: GrpcFloor | undefined;
  floorStart: Outcome<void>;
}

/** The throughput workload: the bridge alone (both upload-pack modes), Gitaly direct and the gRPC floor. */
export async function benchThroughput(
  o: BenchOptions,
  servers: ThroughputServers,
  repos: { large: GeneratedRepo; smallHead: string },
  stackMissing: string,
  failures: FailureLog,
): Promise<Partial<Record<ThroughputId, Outcome<ThroughputResult>>>> {
  const stack = servers.stack;
  const large = repos.large;
  const direct = {
    sidechannel: stack ? gitalyDirect(stack, 'sidechannel') : undefined,
    stream: stack ? gitalyDirect(stack, 'stream') : undefined,
  };
  try {
    return await runThroughput(
      {
        stack,
        bridges: {
          sidechannel: stack && {
            url: stack.bridgeUrl(PROJECTS.large.cell),
            pid: stack.pid(`bridge-${PROJECTS.large.cell}`),
          },
          stream: servers.streamBridge,
        },
        direct,
        floor: servers.floor,
        why: {
          stack: stackMissing,
          streamBridge: errorOf(servers.streamBridgeStart),
          floor: errorOf(servers.floorStart),
        },
      },
      {
        big: { project: PROJECTS.large.path, head: large.head, packBytes: large.packBytes },
        small: { project: PROJECTS.small.path, head: repos.smallHead, packBytes: 0 },
        rounds: o.throughputRuns,
        timeoutMs: o.opTimeoutMs,
        failures,
        log,
      },
    );
  } finally {
    direct.sidechannel?.close();
    direct.stream?.close();
  }
}

/** The bridge's Gitaly client for the cell of the large and small repositories, without the bridge. */
function gitalyDirect(stack: BenchStack, mode: UploadPackMode): GitalyDirect | undefined {
  const cell = stack.json.cells.find((c) => c.name === PROJECTS.large.cell);
  if (!cell) return undefined;
  return new GitalyDirect(
    {
      address: `tcp://${cell.gitaly}`,
      token: readSecretFile(stack.json.secrets.gitaly, 'Gitaly token'),
      storage: 'default',
      repository: (path) => {
        const project = demoWorld().projects.find((p) => `${p.namespace}/${p.path}` === path);
        if (!project) throw new Error(`no demo project ${path}`);
        return { relativePath: hashedRepoPath(project.id), glRepository: `project-${project.id}` };
      },
    },
    mode,
  );
}
