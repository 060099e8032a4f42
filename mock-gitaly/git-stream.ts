import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import type { SSHStreamResponse } from '../lib/proto.js';
import { Internal, NegotiationTimeout, type RpcError, toServiceError } from './errors.js';
import type { GitCommand } from './git-command.js';
import { GitProcess, type GitProcessRegistry } from './git-process.js';
import { type NegotiationEnd, NegotiationMonitor } from './negotiation.js';

/** Gitaly's largest stdout/stderr payload per response message (streamio WriteBufferSize). */
export const MAX_RESPONSE_CHUNK = 128 * 1024;
/** stderr kept for error messages; git's fatal lines are short. */
const STDERR_KEPT_BYTES = 8 * 1024;
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

export type GitStreamOutcome = 'ok' | 'failed' | 'negotiation-timeout' | 'cancelled' | 'spawn-failed';

export interface GitStreamResult {
  outcome: GitStreamOutcome;
  exitCode: number | null;
  stdinBytes: number;
  stdoutBytes: number;
  stderrBytes: number;
}

/**
 * Runs one git command for one bidi call: request `stdin` → git stdin, git stdout/stderr → response
 * messages (≤ 128 KiB each), with backpressure both ways (a slow client stalls git instead of filling
 * memory). The call ends when git exits, without waiting for the client's stdin to end; a cancelled
 * call kills the git process group. Resolves once the call is finished; never rejects.
 */
export function runGitStream<Req extends { stdin?: Buffer }>(
  opts: GitStreamOptions<Req>,
): Promise<GitStreamResult> {
  const { call, logger, processes } = opts;
  return new Promise((resolve) => {
    const git = new GitProcess(opts.command);
    const { child } = git;
    processes.add(git);

    let finished = false;
    let cancelled = false;
    let timedOut = false;
    let spawnError: Error | undefined;
    let outputPaused = false;
    const counts = { stdinBytes: 0, stdoutBytes: 0, stderrBytes: 0 };
    const stderrKept: Buffer[] = [];
    let stderrKeptBytes = 0;

    const monitor = opts.negotiation
      ? new NegotiationMonitor(opts.negotiation.until, opts.negotiation.timeoutMs, () => {
          timedOut = true;
          logger.warn({ timeout_ms: opts.negotiation?.timeoutMs }, 'negotiation timed out; killing git');
          git.kill();
        })
      : undefined;

    // client → git
    const onRequest = (req: Req) => {
      const data = req.stdin;
      if (!data || data.length === 0 || !child.stdin.writable) return;
      counts.stdinBytes += data.length;
      monitor?.feed(data);
      if (!child.stdin.write(data)) {
        call.pause();
        child.stdin.once('drain', () => {
          if (!finished) call.resume();
        });
      }
    };
    const onRequestsEnd = () => {
      monitor?.stop();
      child.stdin.end();
    };
    const onCancelled = () => {
      cancelled = true;
      logger.info('call cancelled by the client; killing git');
      git.kill();
      // Nobody reads the output any more: let git's pipes drain so it can die.
      child.stdout.resume();
      child.stderr.resume();
    };
    // git exiting while the client still sends gives EPIPE here; that is expected, never fatal.
    child.stdin.on('error', (err) => logger.debug({ err: err.message }, 'git stdin closed'));

    // git → client
    const send = (field: 'stdout' | 'stderr', chunk: Buffer) => {
      if (cancelled) return;
      let full = false;
      for (let offset = 0; offset < chunk.length; offset += MAX_RESPONSE_CHUNK) {
        const piece = chunk.subarray(offset, offset + MAX_RESPONSE_CHUNK);
        if (!call.write(field === 'stdout' ? { stdout: piece } : { stderr: piece })) full = true;
      }
      if (full && !outputPaused) {
        outputPaused = true;
        child.stdout.pause();
        child.stderr.pause();
        call.once('drain', () => {
          outputPaused = false;
          child.stdout.resume();
          child.stderr.resume();
        });
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      counts.stdoutBytes += chunk.length;
      send('stdout', chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      counts.stderrBytes += chunk.length;
      if (stderrKeptBytes < STDERR_KEPT_BYTES) {
        const kept = chunk.subarray(0, STDERR_KEPT_BYTES - stderrKeptBytes);
        stderrKept.push(kept);
        stderrKeptBytes += kept.length;
      }
      send('stderr', chunk);
    });

    const finish = (exitCode: number | null) => {
      if (finished) return;
      finished = true;
      monitor?.stop();
      processes.delete(git);
      call.off('data', onRequest);
      call.off('end', onRequestsEnd);
      call.off('cancelled', onCancelled);
      // Whatever the client still sends is read and dropped.
      call.resume();

      const result = (outcome: GitStreamOutcome): GitStreamResult => ({ outcome, exitCode, ...counts });
      const fail = (err: RpcError) => {
        if (!cancelled) call.emit('error', toServiceError(err));
      };
      const status = exitCode ?? -1;
      if (cancelled) return resolve(result('cancelled'));
      if (spawnError) {
        fail(Internal(`spawn ${opts.command.file}: ${spawnError.message}`, spawnError));
        return resolve(result('spawn-failed'));
      }
      if (timedOut) {
        call.write({ exit_status: { value: status } });
        fail(NegotiationTimeout('waiting for negotiation'));
        return resolve(result('negotiation-timeout'));
      }
      if (status === 0) {
        if (opts.exitStatusOnSuccess) call.write({ exit_status: { value: 0 } });
        call.end();
        return resolve(result('ok'));
      }
      call.write({ exit_status: { value: status } });
      fail(opts.failure(status, Buffer.concat(stderrKept).toString('utf8')));
      return resolve(result('failed'));
    };

    child.on('error', (err) => {
      spawnError = err;
      // A process that never started emits no 'close'.
      if (child.pid === undefined) finish(null);
    });
    child.on('close', (code) => finish(code));

    call.on('data', onRequest);
    call.on('end', onRequestsEnd);
    call.on('cancelled', onCancelled);
    call.resume();
  });
}
