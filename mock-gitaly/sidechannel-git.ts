import type { Duplex } from 'node:stream';
import type { Logger } from '../lib/logger.js';
import { encodeSideband, SidechannelError, StdinDeframer } from '../lib/sidechannel.js';
import type { GitOutput, GitRun, GitRunResult } from './git-run.js';
import { type NegotiationStats, NegotiationStatsParser } from './negotiation-stats.js';

/**
 * git output → sideband packets (band 1 stdout, band 2 stderr, ≤ 65515 bytes each). Header and data
 * of a packet go out corked, so they travel in one yamux frame, as Gitaly's SidebandWriter coalesces
 * them into one Write.
 */
export function sidebandOutput(stream: Duplex): GitOutput {
  return {
    write(band, chunk) {
      const parts = encodeSideband(band === 'stdout' ? 1 : 2, chunk);
      let ok = true;
      for (let i = 0; i < parts.length && stream.writable; i += 2) {
        stream.cork();
        stream.write(parts[i]);
        ok = stream.write(parts[i + 1]);
        stream.uncork();
      }
      return ok;
    },
    onceDrain: (resume) => stream.once('drain', resume),
  };
}

export interface SidechannelInput {
  /** Every piece of git's stdin, in order (the negotiation statistics parser). */
  onStdin(data: Buffer): void;
}

/**
 * The client's side of the sidechannel → git's stdin: pkt payloads are de-framed; the flush ends
 * git's stdin and whatever follows is read and dropped. A stream that ends without the flush, or a
 * bare `0001`–`0003`, is logged and also just ends git's stdin, as Gitaly's read monitor does: git
 * decides the outcome (a request cut short makes it print the hung-up line → CANCELLED). The stream
 * breaking (RST, session gone) means the client is gone: git is killed.
 */
export function pipeSidechannelStdin(
  stream: Duplex,
  git: GitRun,
  logger: Logger,
  input: SidechannelInput,
): () => void {
  const deframer = new StdinDeframer();
  let stdinOpen = true;
  const endStdin = (err?: unknown) => {
    if (!stdinOpen) return;
    stdinOpen = false;
    if (err !== undefined) {
      const code = err instanceof SidechannelError ? err.code : undefined;
      logger.warn({ err: (err as Error).message, code }, 'sidechannel stdin ended without a flush');
    }
    git.endStdin();
  };
  const onData = (chunk: Buffer) => {
    if (!stdinOpen) return;
    let pushed: ReturnType<StdinDeframer['push']>;
    try {
      pushed = deframer.push(chunk);
    } catch (err) {
      return endStdin(err);
    }
    let full = false;
    for (const data of pushed.data) {
      input.onStdin(data);
      if (!git.writeStdin(data)) full = true;
    }
    if (pushed.ended) endStdin();
    else if (full) {
      stream.pause();
      git.onceStdinDrain(() => stream.resume());
    }
  };
  const onEnd = () => {
    try {
      deframer.end();
      endStdin();
    } catch (err) {
      endStdin(err);
    }
  };
  const onBroken = (err?: Error) => {
    if (git.exited) return;
    logger.info({ err: err?.message }, 'sidechannel closed by the client; killing git');
    git.cancel();
  };
  const listeners = Object.entries({ data: onData, end: onEnd, error: onBroken, close: onBroken });
  for (const [event, listener] of listeners) stream.on(event, listener);
  stream.resume();
  return () => {
    for (const [event, listener] of listeners) stream.off(event, listener);
  };
}

/** Half-closes the sidechannel (yamux FIN) once every packet has passed the client's window. */
export function closeSidechannel(stream: Duplex): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableFinished || stream.destroyed) return resolve();
    const done = () => {
      stream.off('finish', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('finish', done);
    stream.on('close', done);
    stream.on('error', done);
    stream.end();
    // Nothing more is read from the client; keep its window moving.
    stream.resume();
  });
}

/** What `runOnSidechannel` needs of a gRPC call: whether and when the client cancelled it. */
export interface CancellableCall {
  readonly cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
  off(event: 'cancelled', listener: () => void): unknown;
}

/**
 * `git` with the sidechannel as its stdin (`pipeSidechannelStdin`, the negotiation statistics read
 * on the way) until it exits; the client cancelling the call kills git and breaks the stream. The
 * sidechannel is closed before it resolves. Both upload-pack RPCs (SSH and smart HTTP) run this way.
 */
export async function runOnSidechannel(
  call: CancellableCall,
  stream: Duplex,
  git: GitRun,
  logger: Logger,
): Promise<{ run: GitRunResult; stats: NegotiationStats }> {
  const stats = new NegotiationStatsParser();
  const detach = pipeSidechannelStdin(stream, git, logger, { onStdin: (data) => stats.feed(data) });
  const onCancelled = () => {
    logger.info('call cancelled by the client; killing git');
    git.cancel();
    stream.destroy();
  };
  call.once('cancelled', onCancelled);
  if (call.cancelled) onCancelled();
  const run = await git.done;
  call.off('cancelled', onCancelled);
  detach();
  await closeSidechannel(stream);
  return { run, stats: stats.result };
}
