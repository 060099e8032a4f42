import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import {
  encodeStdin,
  SIDECHANNEL_ID_METADATA,
  SidebandReader,
  SidechannelError,
  STDIN_FLUSH,
} from '../sidechannel.js';
import type { SidechannelRegistry, SidechannelWaiter } from './registry.js';
import type { GitalySshCall, SshCallResult } from './ssh-call.js';

/** After a failed status, output still in flight on the sidechannel gets this long to arrive. */
const TAIL_GRACE_MS = 1000;

export interface UnaryMethod {
  path: string;
  requestSerialize: (value: never) => Buffer;
  responseDeserialize: (bytes: Buffer) => unknown;
}

/**
 * `SSHUploadPackWithSidechannel`, as Gitaly's Go client runs it: register an id, make the unary
 * call with `gitaly-sidechannel-id`, and when Gitaly opens the stream back, send stdin as
 * pkt-lines (flush = end of stdin) and demux its sideband into stdout/stderr. The call is over when
 * the stream has ended and the unary status is in; stdin may still be open then.
 */
export class SidechannelSshCall extends EventEmitter implements GitalySshCall {
  readonly transport = 'sidechannel';
  private readonly waiter: SidechannelWaiter;
  private readonly unary: grpc.ClientUnaryCall;
  private stream: Duplex | undefined;
  private pending: Buffer[] = [];
  private stdinEnded = false;
  private paused = false;
  private eof = false;
  private status: SshCallResult | undefined;
  private ended = false;
  private tailTimer: NodeJS.Timeout | undefined;
  private readonly reader = new SidebandReader((band, data) =>
    this.emit('output', band === 1 ? 'stdout' : 'stderr', data),
  );

  constructor(
    client: grpc.Client,
    method: UnaryMethod,
    registry: SidechannelRegistry,
    request: unknown,
    metadata: grpc.Metadata,
  ) {
    super();
    this.waiter = registry.register();
    metadata.set(SIDECHANNEL_ID_METADATA, String(this.waiter.id));
    this.unary = client.makeUnaryRequest(
      method.path,
      method.requestSerialize as (v: unknown) => Buffer,
      method.responseDeserialize,
      request,
      metadata,
      (err) => this.onStatus(err),
    );
    void this.waiter.stream.then((stream) => this.attach(stream));
  }

  writeStdin(chunk: Buffer): boolean {
    if (this.ended || this.stdinEnded) return true;
    if (!this.stream) {
      // Until Gitaly opens the stream, hold one chunk and ask the writer to wait.
      this.pending.push(chunk);
      return false;
    }
    return this.send(encodeStdin(chunk));
  }

  endStdin(): void {
    if (this.stdinEnded) return;
    this.stdinEnded = true;
    if (this.stream && !this.ended) this.stream.write(STDIN_FLUSH);
  }

  pauseOutput(): void {
    this.paused = true;
    this.stream?.pause();
  }

  resumeOutput(): void {
    this.paused = false;
    this.stream?.resume();
  }

  cancel(): void {
    this.unary.cancel();
    this.stream?.destroy();
  }

  private send(parts: Buffer[]): boolean {
    const stream = this.stream;
    if (!stream || stream.destroyed) return true;
    let ok = true;
    stream.cork();
    for (const part of parts) ok = stream.write(part);
    process.nextTick(() => stream.uncork());
    return ok;
  }

  private attach(stream: Duplex): void {
    if (this.ended) {
      stream.destroy();
      return;
    }
    this.stream = stream;
    stream.on('error', () => {});
    stream.on('drain', () => this.emit('drain'));
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.once('end', () => this.onEof());
    stream.once('close', () => this.onEof());
    if (this.paused) stream.pause();
    const held = this.pending;
    this.pending = [];
    for (const chunk of held) this.send(encodeStdin(chunk));
    if (this.stdinEnded) stream.write(STDIN_FLUSH);
    if (held.length > 0) this.emit('drain');
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    try {
      this.reader.push(chunk);
    } catch (err) {
      this.protocolFailure(err);
    }
  }

  private onEof(): void {
    if (this.eof) return;
    this.eof = true;
    try {
      this.reader.end();
    } catch (err) {
      this.protocolFailure(err);
      return;
    }
    this.maybeEnd();
  }

  /**
   * The sidechannel broke its framing. Cut off inside a packet means the connection to Gitaly went
   * away under it (Gitaly killed or unreachable mid-pack): `UNAVAILABLE`, as grpc-go reports a lost
   * transport; any other breach is `INTERNAL`.
   */
  private protocolFailure(err: unknown): void {
    const text = err instanceof SidechannelError ? err.message : String(err);
    const message = text.startsWith('sidechannel: ') ? text : `sidechannel: ${text}`;
    const cutOff = err instanceof SidechannelError && err.code === 'SIDECHANNEL_UNEXPECTED_EOF';
    this.unary.cancel();
    this.stream?.destroy();
    this.finish({ code: cutOff ? grpc.status.UNAVAILABLE : grpc.status.INTERNAL, details: message });
  }

  private onStatus(err: grpc.ServiceError | null): void {
    this.waiter.close();
    if (err) {
      this.status = { code: err.code, details: err.details };
    } else if (!this.waiter.arrived) {
      this.status = {
        code: grpc.status.INTERNAL,
        details: 'sidechannel: callback de-registered without having run',
      };
    } else {
      this.status = { code: grpc.status.OK, details: '', exitStatus: 0 };
    }
    this.maybeEnd();
  }

  private maybeEnd(): void {
    const status = this.status;
    if (this.ended || !status) return;
    if (this.eof || !this.stream) {
      this.finish(status);
      return;
    }
    if (status.code !== grpc.status.OK && !this.tailTimer) {
      this.tailTimer = setTimeout(() => this.finish(status), TAIL_GRACE_MS);
      this.tailTimer.unref();
    }
  }

  private finish(result: SshCallResult): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.tailTimer);
    this.waiter.close();
    const stream = this.stream;
    if (stream && !stream.destroyed) {
      // Gitaly's client closes the stream once the response is read; mid-response it resets it.
      if (this.eof) stream.end();
      else stream.destroy();
    }
    this.emit('end', result);
  }
}
