import type { Duplex } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import type { PostUploadPackWithSidechannelResponse } from '../lib/generated/gitaly/PostUploadPackWithSidechannelResponse.js';
import type { Logger } from '../lib/logger.js';
import type { PostUploadPackWithSidechannelRequest } from '../lib/proto-smarthttp.js';
import { authorize } from './auth.js';
import {
  ClientCanceled,
  GitFailed,
  logRpcFailure,
  type RpcError,
  SidechannelFailed,
  toServiceError,
} from './errors.js';
import { type GitOutput, GitRun, type GitRunResult } from './git-run.js';
import { resolveRepository } from './repository.js';
import { closeSidechannel, runOnSidechannel } from './sidechannel-git.js';
import { openSidechannel, type SidechannelSession, sidechannelId } from './sidechannel-open.js';
import { postUploadPackCommand } from './smarthttp-command.js';
import type { ServiceContext } from './ssh-service.js';
import { goQuote } from './upload-pack-sidechannel.js';

type UnaryCall = grpc.ServerUnaryCall<
  PostUploadPackWithSidechannelRequest,
  PostUploadPackWithSidechannelResponse
>;

/** git's stdout raw onto the sidechannel (HTTP has no sideband here); stderr is only kept for errors. */
function rawOutput(stream: Duplex): GitOutput {
  return {
    write: (band, chunk) => (band === 'stdout' && stream.writable ? stream.write(chunk) : true),
    onceDrain: (resume) => stream.once('drain', resume),
  };
}

/**
 * The call's status after git (Gitaly's `upload_pack.go`): a non-zero exit after a `deepen` request
 * is success (git upload-pack exits 128 after answering a shallow fetch statelessly).
 */
function failure(run: GitRunResult, cancelled: boolean, deepen: boolean): RpcError | undefined {
  if (run.outcome === 'ok') return undefined;
  if (cancelled || run.outcome === 'cancelled') return ClientCanceled('context canceled');
  if (run.outcome === 'failed' && deepen) return undefined;
  const exit = run.exitCode !== null ? `exit status ${run.exitCode}` : `signal: ${run.signal ?? 'unknown'}`;
  return GitFailed(`running upload-pack: cmd wait: ${exit}, stderr: ${goQuote(run.stderr)}`);
}

async function runOverSidechannel(
  ctx: ServiceContext,
  call: UnaryCall,
  stream: Duplex,
  repoPath: string,
  logger: Logger,
) {
  let command: ReturnType<typeof postUploadPackCommand>;
  try {
    command = postUploadPackCommand(repoPath, call.request, logger);
  } catch (err) {
    await closeSidechannel(stream);
    throw err;
  }
  const git = new GitRun({ command, logger, processes: ctx.processes, output: rawOutput(stream) });
  return runOnSidechannel(call, stream, git, logger);
}

async function serve(
  ctx: ServiceContext,
  session: SidechannelSession | undefined,
  call: UnaryCall,
  callback: grpc.sendUnaryData<PostUploadPackWithSidechannelResponse>,
  logger: Logger,
) {
  const started = Date.now();
  try {
    authorize(call.metadata, ctx.config.token);
    const repoPath = resolveRepository(ctx.config.storages, call.request.repository);
    const id = sidechannelId(call.metadata);
    if (session === undefined) {
      throw SidechannelFailed(
        'opennig sidechannel: sidechannel: fail to extract mux session: non-multiplexed connection',
      );
    }
    const abort = new AbortController();
    const onCancelled = () => abort.abort();
    call.once('cancelled', onCancelled);
    const stream = await openSidechannel(session, id, {
      timeoutMs: ctx.config.sidechannelHandshakeTimeoutMs,
      signal: abort.signal,
    }).finally(() => call.off('cancelled', onCancelled));
    const { run, stats } = await runOverSidechannel(ctx, call, stream, repoPath, logger);
    const err = failure(run, call.cancelled, stats.deepen !== '');
    logger.info(
      {
        outcome: run.outcome,
        exit_code: run.exitCode,
        duration_ms: Date.now() - started,
        stdout_bytes: run.stdoutBytes,
      },
      'rpc finished',
    );
    if (err) throw err;
    callback(null, { packfile_negotiation_statistics: stats });
  } catch (err) {
    callback(toServiceError(logRpcFailure(logger, err, started)));
  }
}

/** Gitaly's `PostUploadPackWithSidechannel`: `git upload-pack --stateless-rpc` over the sidechannel. */
export function postUploadPackWithSidechannel(ctx: ServiceContext, session: SidechannelSession | undefined) {
  return (call: UnaryCall, callback: grpc.sendUnaryData<PostUploadPackWithSidechannelResponse>) => {
    const logger = ctx.logger.child({
      rpc: 'PostUploadPackWithSidechannel',
      multiplexed: session !== undefined,
      correlation_id: call.metadata.get('x-gitlab-correlation-id')[0],
    });
    void serve(ctx, session, call, callback, logger);
  };
}
