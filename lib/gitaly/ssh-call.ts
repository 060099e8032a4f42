import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import type { SSHStreamResponse } from '../proto.js';

export type OutputKind = 'stdout' | 'stderr';

/** How a Gitaly SSH call ended: its gRPC status, plus git's exit status when Gitaly sent one. */
export interface SshCallResult {
  code: grpc.status;
  details: string;
  exitStatus?: number;
}

/**
 * The Gitaly side of one git command, whichever RPC carries it: the bidi streams
 * (`SSHReceivePack`, `SSHUploadArchive`, legacy `SSHUploadPack`) or `SSHUploadPackWithSidechannel`.
 * Events: `output(kind, data)`, `drain` (stdin may be written again), `end(result)` exactly once.
 * Output stops between `pauseOutput()` and `resumeOutput()`, so a slow reader stalls Gitaly.
 */
export interface GitalySshCall {
  readonly transport: 'sidechannel' | 'stream';
  /** Feeds git's stdin; false means wait for `drain` before writing more. */
  writeStdin(chunk: Buffer): boolean;
  endStdin(): void;
  pauseOutput(): void;
  resumeOutput(): void;
  /** Cancels the call (Gitaly kills git); `end` follows with CANCELLED. */
  cancel(): void;
  on(event: 'output', fn: (kind: OutputKind, data: Buffer) => void): this;
  on(event: 'drain', fn: () => void): this;
  on(event: 'end', fn: (result: SshCallResult) => void): this;
  once(event: 'drain', fn: () => void): this;
  off(event: 'drain', fn: () => void): this;
}

/** Largest stdin message on the bidi RPCs (Gitaly reads and writes 128 KiB chunks). */
export const STDIN_MESSAGE_BYTES = 128 * 1024;

export type SshRequest = { stdin?: Buffer } & Record<string, unknown>;

/** A bidi RPC: the first message carries the request, later ones `stdin`. */
export class StreamSshCall extends EventEmitter implements GitalySshCall {
  readonly transport = 'stream';
  private status: grpc.StatusObject | undefined;
  private readEnded = false;
  private exitStatus: number | undefined;
  private ended = false;

  constructor(
    private readonly call: grpc.ClientDuplexStream<SshRequest, SSHStreamResponse>,
    first: SshRequest,
  ) {
    super();
    call.on('data', (msg: SSHStreamResponse) => this.onMessage(msg));
    call.on('end', () => {
      this.readEnded = true;
      this.maybeEnd();
    });
    call.on('status', (s: grpc.StatusObject) => {
      this.status = s;
      this.maybeEnd();
    });
    // Failures arrive as 'status'; this listener only keeps the stream from throwing.
    call.on('error', () => {});
    call.on('drain', () => this.emit('drain'));
    call.write(first);
  }

  writeStdin(chunk: Buffer): boolean {
    let ok = true;
    for (let i = 0; i < chunk.length; i += STDIN_MESSAGE_BYTES) {
      ok = this.call.write({ stdin: chunk.subarray(i, i + STDIN_MESSAGE_BYTES) });
    }
    return ok;
  }

  endStdin(): void {
    this.call.end();
  }

  pauseOutput(): void {
    this.call.pause();
  }

  resumeOutput(): void {
    this.call.resume();
  }

  cancel(): void {
    this.call.cancel();
  }

  private onMessage(msg: SSHStreamResponse): void {
    if (msg.exit_status) this.exitStatus = msg.exit_status.value ?? 0;
    if (msg.stderr && msg.stderr.length > 0) this.emit('output', 'stderr', msg.stderr);
    if (msg.stdout && msg.stdout.length > 0) this.emit('output', 'stdout', msg.stdout);
  }

  private maybeEnd(): void {
    if (this.ended || !this.status || !this.readEnded) return;
    this.ended = true;
    const result: SshCallResult = { code: this.status.code, details: this.status.details };
    if (this.exitStatus !== undefined) result.exitStatus = this.exitStatus;
    this.emit('end', result);
  }
}
