import * as grpc from '@grpc/grpc-js';
import { GitalyConnections, type GitalySshCall, type UploadPackMode } from '../lib/gitaly/index.js';
import { gitalyAuthHeader } from '../lib/gitaly-auth.js';
import { uploadPackBody } from './bridge-client.js';

/**
 * Diagnostic contender: the bridge's own Gitaly client without the bridge — `lib/gitaly`'s
 * `GitalyConnections` (backchannel connection, windows as the bridge's defaults) calling the cell's
 * mock Gitaly with the same request, over the sidechannel (`SSHUploadPackWithSidechannel`) or the
 * bidi stream (`SSHUploadPack`, which needs a mock Gitaly with `legacyUploadPack`). Bridge-only ÷
 * this, in the same mode, isolates what the bridge adds; this ÷ the gRPC floor is git and mock Gitaly.
 */
export interface GitalyTarget {
  /** The cell's Gitaly address as Rails hands it out (`tcp://host:port`). */
  address: string;
  token: string;
  storage: string;
  /** Where a project's repository lives in the storage, and its `gl_repository`. */
  repository(project: string): { relativePath: string; glRepository: string };
}

/**
 * The bridge's defaults in bridge/config.ts (`h2StreamWindowBytes` 2 MiB, `gitalyYamuxWindowBytes`
 * 2 MiB, `gitalyKeepaliveMs`): keep them equal, or this contender stops isolating the bridge's cost.
 */
const FLOW_CONTROL_WINDOW = 2 * 1024 * 1024;
const YAMUX_WINDOW = 2 * 1024 * 1024;
const KEEPALIVE_MS = 20_000;

export interface UploadPackOutcome {
  stdoutBytes: number;
  ms: number;
}

export class GitalyDirect {
  private readonly connections: GitalyConnections;

  constructor(
    private readonly target: GitalyTarget,
    readonly mode: UploadPackMode,
  ) {
    this.connections = new GitalyConnections({
      uploadPack: mode,
      keepaliveMs: KEEPALIVE_MS,
      userAgent: 'cells-bench',
      flowControlWindow: FLOW_CONTROL_WINDOW,
      yamuxWindow: YAMUX_WINDOW,
    });
  }

  /** One upload-pack of `wants` from `project`; resolves with the stdout bytes once git exited 0. */
  uploadPack(project: string, wants: readonly string[], timeoutMs: number): Promise<UploadPackOutcome> {
    const repo = this.target.repository(project);
    const md = new grpc.Metadata();
    md.set('authorization', gitalyAuthHeader(this.target.token));
    const started = performance.now();
    const call = this.connections.get(this.target.address, this.target.token).open(
      'upload-pack',
      {
        repository: {
          storage_name: this.target.storage,
          relative_path: repo.relativePath,
          gl_repository: repo.glRepository,
        },
      },
      md,
    );
    const done = outcome(call, timeoutMs);
    call.writeStdin(uploadPackBody(wants));
    call.endStdin();
    return done.then((stdoutBytes) => ({ stdoutBytes, ms: performance.now() - started }));
  }

  close(): void {
    this.connections.close();
  }
}

/** Counts the call's stdout; resolves with it when the call ends well, rejects with Gitaly's status or git's stderr. */
function outcome(call: GitalySshCall, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdoutBytes = 0;
    let stderr = '';
    const timer = setTimeout(() => {
      call.cancel();
      reject(new Error(`upload-pack (${call.transport}) did not end within ${timeoutMs} ms`));
    }, timeoutMs);
    call.on('output', (kind, data) => {
      if (kind === 'stdout') stdoutBytes += data.length;
      else stderr = (stderr + data.toString()).slice(-2048);
    });
    call.on('end', (result) => {
      clearTimeout(timer);
      if (result.code !== grpc.status.OK) {
        reject(new Error(`${call.transport}: ${grpc.status[result.code]}: ${result.details}`));
      } else if ((result.exitStatus ?? 0) !== 0) {
        reject(new Error(`upload-pack exit ${result.exitStatus}: ${stderr.trim()}`));
      } else resolve(stdoutBytes);
    });
  });
}
