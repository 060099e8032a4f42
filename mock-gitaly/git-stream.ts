import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import type { SSHStreamResponse } from '../lib/proto.js';
import { Internal, NegotiationTimeout, type RpcError, toServiceError } from './errors.js';
import type { GitCommand } from './git-command.js';
import type { GitProcessRegistry } from './git-process.js';
import { type GitOutput, GitRun, type GitRunOutcome, type GitRunResult } from './git-run.js';
import type { NegotiationEnd } from './negotiation.js';

/** Gitaly's largest stdout/stderr payload per response message (streamio WriteBufferSize). */
export const MAX_RESPONSE_CHUNK = 128 * 1024;
/** What git prints when its client disappears mid-conversation; Gitaly maps it to CANCELLED. */
export const HUNG_UP_STDERR = 'fatal: the remote end hung up unexpectedly\n';

export type DuplexCall<Req> = ServerDuplexStream<Req, SSHStreamResponse>;

/**
 * Waits for the first request of a bidi call and pauses the call after it, so later requests stay
 * queued until the git process is ready for them. Undefined when the client ends or cancels first.
 */
export function readFirstRequest<Req>(call: DuplexCall<Req>): Promise<Req | undefined> {
  return new Promise((resolve) => {
    const settle = (req: Req | undefined) => {
      call.pause();
      call.off('data', settle);
      call.off('end', onEnd);
      call.off('cancelled', onEnd);
      resolve(req);
    };
    const onEnd = () => settle(undefined);
    call.on('data', settle);
    call.once('end', onEnd);
    call.once('cancelled', onEnd);
  });
}

export interface GitStreamOptions<Req> {
  call: DuplexCall<Req>;
  command: GitCommand;
  logger: Logger;
  processes: GitProcessRegistry;
  /** Kill git unless the client's stdin shows the end of negotiation in time. */
  negotiation?: { until: NegotiationEnd; timeoutMs: number };
  /** upload-archive reports `exit_status{0}` on success; upload-pack and receive-pack send nothing. */
  exitStatusOnSuccess: boolean;
  /** The error a non-zero exit ends the call with (after its exit_status message). */
  failure(exitCode: number, stderr: string): RpcError;
}

export type GitStreamOutcome = GitRunOutcome;

export interface GitStreamResult {
  outcome: GitStreamOutcome;
  exitCode: number | null;
  stdinBytes: number;
  stdoutBytes: number;
  stderrBytes: number;
}

/** git output → response messages of at most 128 KiB, paused while grpc-js's buffer is full. */
function callOutput<Req>(call: DuplexCall<Req>): GitOutput {
  return {
    write(band, chunk) {
      let ok = true;
      for (let offset = 0; offset < chunk.length; offset += MAX_RESPONSE_CHUNK) {
        const piece = chunk.subarray(offset, offset + MAX_RESPONSE_CHUNK);
        if (!call.write(band === 'stdout' ? { stdout: piece } : { stderr: piece })) ok = false;
      }
      return ok;
    },
    onceDrain: (resume) => call.once('drain', resume),
  };
}

/** The error a finished git ends the bidi call with; undefined for success or a cancelled call. */
function callError<Req>(opts: GitStreamOptions<Req>, run: GitRunResult): RpcError | undefined {
  switch (run.outcome) {
    case 'ok':
    case 'cancelled':
      return undefined;
    case 'spawn-failed': {
      const err = run.spawnError as Error;
      return Internal(`spawn ${opts.command.file}: ${err.message}`, err);
    }
    case 'negotiation-timeout':
      return NegotiationTimeout('waiting for negotiation');
    case 'failed':
      return opts.failure(run.exitCode ?? -1, run.stderr);
  }
}

/** Ends the call as Gitaly's bidi RPCs do: exit_status (when git ran), then OK or the error. */
function endCall<Req>(opts: GitStreamOptions<Req>, run: GitRunResult): void {
  const { call } = opts;
  if (run.outcome === 'cancelled') return;
  const err = callError(opts, run);
  if (err === undefined) {
    if (opts.exitStatusOnSuccess) call.write({ exit_status: { value: 0 } });
    call.end();
    return;
  }
  if (run.outcome !== 'spawn-failed') call.write({ exit_status: { value: run.exitCode ?? -1 } });
  call.emit('error', toServiceError(err));
}

/**
 * Runs one git command for one bidi call: request `stdin` → git stdin, git stdout/stderr → response
 * messages (≤ 128 KiB each), with backpressure both ways (a slow client stalls git instead of filling
 * memory). The call ends when git exits, without waiting for the client's stdin to end; a cancelled
 * call kills the git process group. Resolves once the call is finished; never rejects.
 */
export async function runGitStream<Req extends { stdin?: Buffer }>(
  opts: GitStreamOptions<Req>,
): Promise<GitStreamResult> {
  const { call, logger } = opts;
  const git = new GitRun({ ...opts, output: callOutput(call) });
  const onRequest = (req: Req) => {
    if (req.stdin && !git.writeStdin(req.stdin)) {
      call.pause();
      git.onceStdinDrain(() => call.resume());
    }
  };
  const onRequestsEnd = () => git.endStdin();
  const onCancelled = () => {
    logger.info('call cancelled by the client; killing git');
    git.cancel();
  };
  call.on('data', onRequest);
  call.on('end', onRequestsEnd);
  call.on('cancelled', onCancelled);
  call.resume();

  const run = await git.done;
  call.off('data', onRequest);
  call.off('end', onRequestsEnd);
  call.off('cancelled', onCancelled);
  // Whatever the client still sends is read and dropped.
  call.resume();
  endCall(opts, run);
  const { outcome, exitCode, stdinBytes, stdoutBytes, stderrBytes } = run;
  return { outcome, exitCode, stdinBytes, stdoutBytes, stderrBytes };
}
