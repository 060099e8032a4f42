import type { Duplex } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import type { SSHUploadPackWithSidechannelResponse } from '../lib/generated/gitaly/SSHUploadPackWithSidechannelResponse.js';
import type { Logger } from '../lib/logger.js';
import type { SSHUploadPackRequest } from '../lib/proto.js';
import { authorize } from './auth.js';
import {
  ClientCanceled,
  GitFailed,
  Internal,
  logRpcFailure,
  NegotiationTimeout,
  type RpcError,
  SidechannelFailed,
  toServiceError,
} from './errors.js';
import { uploadPackCommand } from './git-command.js';
import { GitRun, type GitRunResult } from './git-run.js';
import { HUNG_UP_STDERR } from './git-stream.js';
import { resolveRepository } from './repository.js';
import { noteCallBytes } from './rpc-journal.js';
import { closeSidechannel, runOnSidechannel, sidebandOutput } from './sidechannel-git.js';
import { openSidechannel, type SidechannelSession, sidechannelId } from './sidechannel-open.js';
import type { ServiceContext } from './ssh-service.js';

export type SidechannelRequest = Omit<SSHUploadPackRequest, 'stdin'>;
/** The generated (input) message type: int64 counters may be plain numbers. */
export type SidechannelResponse = SSHUploadPackWithSidechannelResponse;
type UnaryCall = grpc.ServerUnaryCall<SidechannelRequest, SidechannelResponse>;

/** Go's `exec.ExitError` text: "exit status N" or "signal: killed". */
function exitText(run: GitRunResult): string {
  if (run.exitCode !== null) return `exit status ${run.exitCode}`;
  const names: Record<string, string> = { SIGKILL: 'killed', SIGTERM: 'terminated', SIGPIPE: 'broken pipe' };
  return `signal: ${names[run.signal ?? ''] ?? run.signal ?? 'unknown'}`;
}

/** Go's `%q` for git's stderr (ASCII and printable UTF-8 as is, the rest escaped). */
export function goQuote(text: string): string {
  const escapes: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '"': '\\"', '\\': '\\\\' };
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (escapes[ch]) out += escapes[ch];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code === 0xfffd) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/** The call's status after git, with Gitaly's codes and texts (`upload_pack.go`, `upload_command.go`). */
function failure(run: GitRunResult, callCancelled: boolean): RpcError | undefined {
  switch (run.outcome) {
    case 'ok':
      return undefined;
    case 'cancelled':
      return callCancelled
        ? ClientCanceled('context canceled')
        : GitFailed(`running upload-pack: cmd wait: ${exitText(run)}, stderr: ${goQuote(run.stderr)}`);
    case 'spawn-failed':
      return Internal(`running upload-pack: starting command: ${run.spawnError?.message}`, run.spawnError);
    case 'negotiation-timeout':
      return NegotiationTimeout('running upload-pack: waiting for negotiation: context canceled');
    case 'failed':
      if (run.stderr === HUNG_UP_STDERR)
        return ClientCanceled('running upload-pack: user canceled the request');
      return GitFailed(`running upload-pack: cmd wait: ${exitText(run)}, stderr: ${goQuote(run.stderr)}`);
  }
}

/** git upload-pack over an open sidechannel; resolves with git's result and the negotiation stats. */
async function runUploadPack(
  ctx: ServiceContext,
  call: UnaryCall,
  stream: Duplex,
  repoPath: string,
  logger: Logger,
) {
  // Gitaly converts the config options after opening the sidechannel, so their errors come after it.
  let command: ReturnType<typeof uploadPackCommand>;
  try {
    command = uploadPackCommand(repoPath, call.request, logger);
  } catch (err) {
    await closeSidechannel(stream);
    throw err;
  }
  const git = new GitRun({
    command,
    logger,
    processes: ctx.processes,
    output: sidebandOutput(stream),
    negotiation: { until: 'done', timeoutMs: ctx.config.uploadPackNegotiationTimeoutMs },
  });
  return runOnSidechannel(call, stream, git, logger);
}

/**
 * Gitaly's `SSHUploadPackWithSidechannel`: auth, repository validation (no stream is opened for a
 * bad request), then the sidechannel on the caller's yamux session, `git upload-pack` over it, and
 * the negotiation statistics as the unary answer. `session` is undefined on a plain connection.
 */
async function serve(
  ctx: ServiceContext,
  session: SidechannelSession | undefined,
  call: UnaryCall,
  callback: grpc.sendUnaryData<SidechannelResponse>,
  logger: Logger,
): Promise<void> {
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
      wrongId: ctx.config.sidechannelWrongId,
      signal: abort.signal,
    }).finally(() => call.off('cancelled', onCancelled));
    const { run, stats } = await runUploadPack(ctx, call, stream, repoPath, logger);
    const result = { outcome: run.outcome, exit_code: run.exitCode, duration_ms: Date.now() - started };
    const err = failure(run, call.cancelled);
    // Every git run gets its 'rpc finished' line (with its outcome), as on the bidi RPCs.
    logger.info({ ...result, stdin_bytes: run.stdinBytes, stdout_bytes: run.stdoutBytes }, 'rpc finished');
    noteCallBytes(call, run.stdinBytes, run.stdoutBytes);
    if (err) throw err;
    callback(null, { packfile_negotiation_statistics: stats });
  } catch (err) {
    const e = logRpcFailure(logger, err, started);
    callback(toServiceError(e));
  }
}

export function uploadPackWithSidechannel(ctx: ServiceContext, session: SidechannelSession | undefined) {
  return (call: UnaryCall, callback: grpc.sendUnaryData<SidechannelResponse>) => {
    const logger = ctx.logger.child({
      rpc: 'SSHUploadPackWithSidechannel',
      multiplexed: session !== undefined,
      correlation_id: call.metadata.get('x-gitlab-correlation-id')[0],
    });
    void serve(ctx, session, call, callback, logger);
  };
}
