import type { Readable } from 'node:stream';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { AppError } from '../lib/errors.js';
import { BodyFrameDecoder, FramingError } from '../lib/framing.js';
import type { GitalySshCall, OutputKind, SshCallResult } from '../lib/gitaly/index.js';
import type { Outcome } from '../lib/outcome.js';
import { type BodyEnd, BodyWatch } from './body-watch.js';
import { BadFrame, BodyTooLarge, IdleTimeout, TunnelTimeout } from './errors.js';
import type { Exchange } from './exchange.js';
import { asGrpcGoStatus, gitalyFailureMessage } from './gitaly-errors.js';
import { OutputBatch } from './output-batch.js';
import { COMPAT_FAILURE_TEXT, type ResponseEncoder, type TunnelFailure } from './response-encoder.js';

export interface TunnelStreamOptions {
  encoder: ResponseEncoder;
  /** Request body uses `Gitlab-Shell-Body-Framing: v1`. */
  bodyFramed: boolean;
  /** 0 = unlimited. */
  maxBodyBytes: number;
  /** The bridge's `gitalyUploadPack` mode and whether this tunnel is upload-pack, for error texts. */
  uploadPackMode: 'sidechannel' | 'stream' | undefined;
  idleTimeoutMs: number;
  maxDurationMs: number;
  keepaliveMs: number;
  onBytesIn: (n: number) => void;
  onBytesOut: (n: number) => void;
}

export interface TunnelStreamResult {
  outcome: Outcome;
  /** gRPC status code name when Gitaly ended the call with an error. */
  grpcCode?: string;
  reason?: string; // what went wrong, for the access log; never sent beyond `TunnelFailure`
  error?: AppError;
  exitStatus?: number;
  bytesIn: number;
  bytesOut: number;
  bodyEnd?: BodyEnd; // the request body's end and last bytes, for the journal (`body-watch.ts`)
  stdinTail?: string;
}

/**
 * The streaming half of a tunnel, after the `200`: request body → `{stdin}`, Gitaly's output →
 * response, with backpressure both ways, timers, and cancellation when either side goes away.
 */
export class TunnelStream {
  private state: 'streaming' | 'ending' | 'done' = 'streaming';
  private lastExit: number | undefined;
  private bytesIn = 0;
  private bytesOut = 0;
  private stdinBytes = 0;
  private result: Omit<TunnelStreamResult, 'bytesIn' | 'bytesOut'> | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private source: Readable | undefined;
  private decoder: BodyFrameDecoder | undefined;
  private waitingCallDrain = false;
  private waitingResDrain = false;
  private settle: ((r: TunnelStreamResult) => void) | undefined;
  private readonly output: OutputBatch;
  private readonly body = new BodyWatch();

  constructor(
    private readonly ex: Exchange,
    private readonly call: GitalySshCall,
    private readonly opts: TunnelStreamOptions,
  ) {
    this.output = new OutputBatch(opts.encoder, (chunks) => this.writeOutput(chunks));
  }

  /** Streams until the call and the response have ended. */
  run(): Promise<TunnelStreamResult> {
    const done = new Promise<TunnelStreamResult>((resolve) => {
      this.settle = resolve;
    });
    this.ex.onClientGone(() => this.clientGone());
    this.call.on('output', (kind: OutputKind, data: Buffer) => {
      if (this.state === 'streaming') this.output.add(kind, data);
    });
    this.call.on('end', (result) => this.onCallEnd(result));
    this.startTimers();
    this.pipeBody();
    if (this.ex.clientGone) this.clientGone();
    return done;
  }

  /**
   * Ends the tunnel from the outside (limits, bad input, shutdown): cancels the call and reports
   * `err` in-band. Compatible mode appends `compatText` (by default the reason after Workhorse's text).
   */
  abort(err: AppError, outcome: Outcome, compatText = `Internal Server Error: ${err.message}\n`): void {
    if (this.state !== 'streaming') return;
    this.call.cancel();
    const failure = { code: err.code, message: err.message, compatText };
    this.fail(failure, { outcome, reason: err.message, error: err });
  }

  private pipeBody(): void {
    const body = this.ex.body;
    body.on('data', (chunk: Buffer) => {
      this.bytesIn += chunk.length;
      this.opts.onBytesIn(chunk.length);
      this.activity();
    });
    let source: Readable = body;
    if (this.opts.bodyFramed) {
      const decoder = new BodyFrameDecoder();
      decoder.on('error', (err) => {
        const message = err instanceof FramingError ? err.message : String(err);
        this.abort(BadFrame(`malformed request body frame: ${message}`), 'policy', COMPAT_FAILURE_TEXT);
      });
      body.pipe(decoder);
      this.decoder = decoder;
      source = decoder;
    }
    this.source = source;
    source.on('data', (chunk: Buffer) => this.onStdin(chunk));
    source.on('end', () => {
      if (this.state === 'streaming') this.body.end();
      // An HTTP/2 reset can surface as a clean end of the body just before the abort: only a
      // body that ended while the client is still there becomes git's end of stdin.
      setImmediate(() => {
        if (this.state === 'streaming' && !this.ex.clientGone) this.call.endStdin();
      });
    });
  }

  private onStdin(chunk: Buffer): void {
    if (this.state !== 'streaming') return;
    this.body.add(chunk);
    this.stdinBytes += chunk.length;
    if (this.opts.maxBodyBytes > 0 && this.stdinBytes > this.opts.maxBodyBytes) {
      this.abort(BodyTooLarge(`push is larger than the limit of ${this.opts.maxBodyBytes} bytes`), 'policy');
      return;
    }
    const ok = this.call.writeStdin(chunk);
    if (!ok && !this.waitingCallDrain) {
      this.waitingCallDrain = true;
      this.source?.pause();
      this.call.once('drain', this.onCallDrain);
    }
  }

  private readonly onCallDrain = () => {
    this.waitingCallDrain = false;
    if (this.state === 'streaming') this.source?.resume();
  };
  private writeOutput(chunks: Buffer[]): void {
    if (this.state !== 'streaming') return;
    this.activity();
    const ok = this.send(chunks);
    if (!ok && !this.waitingResDrain) {
      this.waitingResDrain = true;
      this.call.pauseOutput();
      this.ex.onDrain(this.onResponseDrain);
    }
  }

  private readonly onResponseDrain = () => {
    this.waitingResDrain = false;
    if (this.state === 'streaming') this.call.resumeOutput();
  };

  /** A drain that never comes (client gone, call cancelled) must not keep this tunnel alive. */
  private stopWaitingForDrain(): void {
    if (this.waitingResDrain) this.ex.removeDrain(this.onResponseDrain);
    if (this.waitingCallDrain) this.call.off('drain', this.onCallDrain);
    this.waitingResDrain = false;
    this.waitingCallDrain = false;
  }

  /** One batch: a single vectored write on the connection, one metrics update. */
  private send(chunks: Buffer[]): boolean {
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.length;
    this.bytesOut += bytes;
    this.opts.onBytesOut(bytes);
    this.keepaliveTimer?.refresh();
    return this.ex.writeAll(chunks);
  }

  private onCallEnd(callResult: SshCallResult): void {
    if (this.state !== 'streaming') return;
    const result = asGrpcGoStatus(callResult);
    this.output.flush();
    if (result.exitStatus !== undefined) this.lastExit = result.exitStatus;
    if (result.code === GrpcStatus.OK) {
      const exitStatus = this.lastExit ?? 0;
      this.finish(this.opts.encoder.success(exitStatus), { outcome: 'ok', exitStatus });
      return;
    }
    const name = GrpcStatus[result.code] ?? String(result.code);
    const message = gitalyFailureMessage(result, this.opts.uploadPackMode);
    this.fail(
      { code: `GITALY_${name}`, message, compatText: COMPAT_FAILURE_TEXT },
      {
        outcome: result.code === GrpcStatus.CANCELLED ? 'client-gone' : 'system',
        grpcCode: name,
        reason: result.details || name,
      },
    );
  }

  private fail(failure: TunnelFailure, result: Omit<TunnelStreamResult, 'bytesIn' | 'bytesOut'>): void {
    this.finish(this.opts.encoder.failure(failure, this.lastExit), { ...result, exitStatus: this.lastExit });
  }

  private finish(chunks: Buffer[], result: Omit<TunnelStreamResult, 'bytesIn' | 'bytesOut'>): void {
    this.state = 'ending';
    this.output.clear();
    this.result = result;
    this.stopInput();
    for (const chunk of chunks) {
      this.bytesOut += chunk.length;
      this.opts.onBytesOut(chunk.length);
    }
    this.ex.end(chunks);
    this.ex.onDone(() => this.settleWith(this.ex.clientGone ? { outcome: 'client-gone' } : result));
  }

  private clientGone(): void {
    if (this.state === 'done') return;
    if (this.state === 'streaming') {
      this.call.cancel();
      this.stopInput();
      this.result = { outcome: 'client-gone', reason: 'client went away' };
    }
    this.settleWith(this.result ?? { outcome: 'client-gone' });
  }

  private settleWith(result: Omit<TunnelStreamResult, 'bytesIn' | 'bytesOut'>): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.clearTimers();
    this.stopWaitingForDrain();
    const body = { bodyEnd: this.body.bodyEnd, stdinTail: this.body.stdinTail };
    this.settle?.({ ...result, bytesIn: this.bytesIn, bytesOut: this.bytesOut, ...body });
  }

  private stopInput(): void {
    this.clearTimers();
    if (this.decoder) {
      this.ex.body.unpipe(this.decoder);
      this.decoder.removeAllListeners('data');
      this.decoder.destroy();
    }
    this.source?.removeAllListeners('data');
    this.source?.removeAllListeners('end');
  }

  private startTimers(): void {
    const { idleTimeoutMs, maxDurationMs, keepaliveMs } = this.opts;
    if (idleTimeoutMs > 0) {
      this.idleTimer = setTimeout(
        () => this.abort(IdleTimeout(`no data in either direction for ${idleTimeoutMs} ms`), 'policy'),
        idleTimeoutMs,
      );
      this.timers.push(this.idleTimer);
    }
    if (maxDurationMs > 0) {
      this.timers.push(
        setTimeout(
          () =>
            this.abort(
              TunnelTimeout(`git operation exceeded the time limit of ${maxDurationMs} ms`),
              'policy',
            ),
          maxDurationMs,
        ),
      );
    }
    const keepalive = this.opts.encoder.keepalive();
    if (keepalive) {
      const timer = setTimeout(() => {
        if (this.state !== 'streaming') return;
        this.bytesOut += keepalive.length;
        this.opts.onBytesOut(keepalive.length);
        this.ex.write(keepalive);
        timer.refresh();
      }, keepaliveMs);
      this.keepaliveTimer = timer;
      this.timers.push(timer);
    }
    for (const t of this.timers) t.unref();
  }

  private activity(): void {
    this.idleTimer?.refresh();
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.length = 0;
    this.idleTimer = undefined;
    this.keepaliveTimer = undefined;
  }
}
