import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import type { SSHReceivePackRequest, SSHUploadArchiveRequest, SSHUploadPackRequest } from '../lib/proto.js';
import { authorize } from './auth.js';
import type { GitalyConfig } from './config.js';
import {
  ClientCanceled,
  GitFailed,
  InvalidArgument,
  logRpcFailure,
  toServiceError,
  Unimplemented,
} from './errors.js';
import { receivePackCommand, uploadArchiveCommand, uploadPackCommand } from './git-command.js';
import type { GitProcessRegistry } from './git-process.js';
import {
  type DuplexCall,
  type GitStreamOptions,
  type GitStreamResult,
  HUNG_UP_STDERR,
  readFirstRequest,
  runGitStream,
} from './git-stream.js';
import type { QuarantineSweeper } from './quarantine.js';
import { resolveRepository } from './repository.js';
import type { SidechannelSession } from './sidechannel-open.js';
import { uploadPackWithSidechannel } from './upload-pack-sidechannel.js';
import type { GitalyWorld } from './world.js';

export interface ServiceContext {
  config: GitalyConfig;
  logger: Logger;
  processes: GitProcessRegistry;
  /** `core.hooksPath` for receive-pack; set when the server starts. */
  hooksDir: string | undefined;
  /** Removes the quarantine a push killed by a signal leaves behind (unset: `quarantineSweep` off). */
  quarantine: QuarantineSweeper | undefined;
  /** The world's faults and the journal every RPC is written to (`rpc-journal.ts`). */
  world: GitalyWorld;
}

/**
 * What an RPC contributes to the shared stream plumbing, built from its validated first request, and
 * what it does once git is gone.
 */
type StreamPlan<Req> = Omit<GitStreamOptions<Req>, 'call' | 'logger' | 'processes'> & {
  finished?(result: GitStreamResult): void;
};

function metadataString(metadata: grpc.Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value : undefined;
}

function hasStdin(req: { stdin?: Buffer }): boolean {
  return req.stdin !== undefined && req.stdin.length > 0;
}

/** Auth → first request → validation → git, for the three bidi RPCs. */
async function serveStream<Req extends { stdin?: Buffer }>(
  ctx: ServiceContext,
  rpc: string,
  call: DuplexCall<Req>,
  plan: (first: Req, logger: Logger) => StreamPlan<Req>,
): Promise<void> {
  const logger = ctx.logger.child({
    rpc,
    peer: call.getPeer(),
    correlation_id: metadataString(call.metadata, 'x-gitlab-correlation-id'),
  });
  const started = Date.now();
  try {
    authorize(call.metadata, ctx.config.token);
    const first = await readFirstRequest(call);
    if (call.cancelled) {
      logger.info('call cancelled before it started');
      return;
    }
    if (first === undefined) throw InvalidArgument('empty request');
    const { finished, ...options } = plan(first, logger);
    const result = await runGitStream({ call, logger, processes: ctx.processes, ...options });
    finished?.(result);
    logger.info({ ...result, duration_ms: Date.now() - started }, 'rpc finished');
  } catch (err) {
    const e = logRpcFailure(logger, err, started);
    call.emit('error', toServiceError(e));
  }
}

function uploadPackPlan(ctx: ServiceContext) {
  return (first: SSHUploadPackRequest, logger: Logger): StreamPlan<SSHUploadPackRequest> => {
    if (hasStdin(first)) throw InvalidArgument('non-empty stdin in first request');
    const repoPath = resolveRepository(ctx.config.storages, first.repository);
    return {
      command: uploadPackCommand(repoPath, first, logger),
      negotiation: { until: 'done', timeoutMs: ctx.config.uploadPackNegotiationTimeoutMs },
      exitStatusOnSuccess: false,
      failure: (code, stderr) =>
        code === 128 && stderr === HUNG_UP_STDERR
          ? ClientCanceled('user canceled the request')
          : GitFailed(`running upload-pack: exit status ${code}, stderr: ${JSON.stringify(stderr)}`),
    };
  };
}

function receivePackPlan(ctx: ServiceContext) {
  return (first: SSHReceivePackRequest, logger: Logger): StreamPlan<SSHReceivePackRequest> => {
    if (!first.gl_id) throw InvalidArgument('empty GlId');
    if (hasStdin(first)) throw InvalidArgument('non-empty data in first request');
    const repoPath = resolveRepository(ctx.config.storages, first.repository);
    if (ctx.hooksDir === undefined) throw new Error('hooks are not installed; the server has not started');
    const payload = {
      gl_id: first.gl_id,
      gl_username: first.gl_username ?? '',
      gl_repository: first.gl_repository || first.repository?.gl_repository || '',
      gl_project_path: first.repository?.gl_project_path ?? '',
      protocol: 'ssh' as const,
      repo_path: repoPath,
      gitlab_url: ctx.config.gitlabUrl,
      gitlab_secret_file: ctx.config.gitlabSecretFile,
    };
    return {
      command: receivePackCommand(repoPath, first, { dir: ctx.hooksDir, payload }, logger),
      exitStatusOnSuccess: false,
      failure: (code, stderr) =>
        code === 128 && stderr === HUNG_UP_STDERR
          ? ClientCanceled('user canceled the push')
          : GitFailed(`cmd wait: exit status ${code}, stderr: ${JSON.stringify(stderr)}`),
      // A receive-pack ended by a signal leaves its quarantine (git >= 2.39); one that exited removed it.
      finished: (result) => {
        if (result.outcome !== 'ok') void ctx.quarantine?.sweepSoon(repoPath);
      },
    };
  };
}

function uploadArchivePlan(ctx: ServiceContext) {
  return (first: SSHUploadArchiveRequest): StreamPlan<SSHUploadArchiveRequest> => {
    if (hasStdin(first)) throw InvalidArgument('non-empty stdin in first request');
    const repoPath = resolveRepository(ctx.config.storages, first.repository);
    return {
      command: uploadArchiveCommand(repoPath),
      negotiation: { until: 'flush', timeoutMs: ctx.config.uploadArchiveNegotiationTimeoutMs },
      exitStatusOnSuccess: true,
      failure: (code, stderr) =>
        GitFailed(`running upload-archive: exit status ${code}, stderr: ${JSON.stringify(stderr)}`),
    };
  };
}

/** grpc-go's answer for a method its service does not register (Gitaly ≥ 17.8 has no SSHUploadPack). */
export const UNKNOWN_UPLOAD_PACK = 'unknown method SSHUploadPack for service gitaly.SSHService';

/**
 * The `gitaly.SSHService` implementation for grpc-js, for one connection: `session` is the caller's
 * yamux session on a backchannel connection (sidechannels are opened on it), undefined on a plain one.
 */
export function sshServiceImplementation(
  ctx: ServiceContext,
  session?: SidechannelSession,
): grpc.UntypedServiceImplementation {
  return {
    SSHUploadPack: (call: DuplexCall<SSHUploadPackRequest>) => {
      if (ctx.config.legacyUploadPack)
        return void serveStream(ctx, 'SSHUploadPack', call, uploadPackPlan(ctx));
      // grpc-go answers before any interceptor runs, so without checking auth.
      call.emit('error', toServiceError(Unimplemented(UNKNOWN_UPLOAD_PACK)));
    },
    SSHReceivePack: (call: DuplexCall<SSHReceivePackRequest>) =>
      void serveStream(ctx, 'SSHReceivePack', call, receivePackPlan(ctx)),
    SSHUploadArchive: (call: DuplexCall<SSHUploadArchiveRequest>) =>
      void serveStream(ctx, 'SSHUploadArchive', call, uploadArchivePlan(ctx)),
    SSHUploadPackWithSidechannel: uploadPackWithSidechannel(ctx, session),
  };
}
