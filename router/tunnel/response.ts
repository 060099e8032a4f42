/**
 * @file A tunnel response → the SSH channel. Framed responses (our `Gitlab-Cells-Response-Framing: v1`)
 * are split into stdout, stderr, exit status, keepalive and error frames; an unframed response
 * (Workhorse's compatible mode) is copied to stdout as it is. Backpressure: when the channel (or its
 * stderr) is full, the response is paused until it drains.
 *
 * stdout is written once per turn of the event loop: HTTP/2 delivers a response in DATA frames of
 * 16 KiB (Node's nghttp2 never sends larger ones), and one SSH channel write per frame would mean a
 * 16 KiB SSH packet, with its allocation, cipher call and socket write, per frame. The frames that
 * arrive in one turn (at most `BATCH_BYTES`) are joined and written together, as SSH packets of the
 * client's maximum size (32 KiB for OpenSSH) that leave in one writev.
 */
import type { Readable, Writable } from 'node:stream';
import { checkResponseFrame, FrameReader, ResponseFrame } from '../../lib/framing.js';
import { PktLineReader } from '../../lib/pktline.js';
import { followReadable, waitDrain } from '../../lib/streams.js';
import { paceYoungGc, YOUNG_GC_PACE_BYTES } from '../../lib/yamux/young-gc.js';

/** What the response said besides its bytes. */
export interface TunnelOutcome {
  framed: boolean;
  /** From the exit status frame; undefined when none came. */
  exitStatus: number | undefined;
  /** From the error frame. */
  error: { code: string; message: string } | undefined;
  /** True when stderr bytes were relayed to the client. */
  wroteStderr: boolean;
}

/** Rewrites the stdout byte stream (push flow: keep or drop the ref advertisement). */
export interface StdoutFilter {
  push(chunk: Buffer): Buffer;
}

export interface RelayTargets {
  stdout: Writable;
  stderr: Writable;
  /**
   * The connection's socket, when known. Each response chunk becomes several SSH packets of at
   * most 32 KiB; corking the socket while they are written hands them to the kernel in one
   * writev instead of one write per packet.
   */
  transport?: Pick<Writable, 'cork' | 'uncork'>;
}

export class TunnelProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TunnelProtocolError';
  }
}

/** Relays `body` to the targets; resolves with what the frames said, rejects on a broken response. */
export function relayResponse(
  body: Readable,
  framed: boolean,
  targets: RelayTargets,
  filter?: StdoutFilter,
): Promise<TunnelOutcome> {
  return new Promise((resolve, reject) => {
    const relay = new ResponseRelay(body, framed, targets, filter, (err) =>
      err ? reject(err) : resolve(relay.outcome),
    );
    relay.start();
  });
}

const ignore = () => undefined;
/** stdout held for one turn of the event loop, at most (written at once beyond it). */
const BATCH_BYTES = 256 * 1024;
const isOutput = (type: number) => type === ResponseFrame.stdout || type === ResponseFrame.stderr;

/**
 * One response being relayed: a `data` handler that demultiplexes each chunk (corked), a set of
 * targets that are full (the body is paused until each has drained, `waitDrain`), and the body's
 * end followed by `followReadable`. Every listener is removed once it settles.
 */
class ResponseRelay {
  readonly outcome: TunnelOutcome;
  private readonly reader: FrameReader | undefined;
  private readonly blocked = new Set<Writable>();
  private readonly done = new AbortController();
  private stopWatching: () => void = ignore;
  /** stdout of this turn, not written yet. */
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private flushScheduled = false;

  constructor(
    private readonly body: Readable,
    framed: boolean,
    private readonly targets: RelayTargets,
    private readonly filter: StdoutFilter | undefined,
    private readonly onSettled: (err?: Error) => void,
  ) {
    this.outcome = { framed, exitStatus: undefined, error: undefined, wroteStderr: false };
    // stdout and stderr are relayed as they arrive: a frame split over many HTTP/2 DATA frames is
    // neither waited for nor copied.
    this.reader = framed ? new FrameReader(checkResponseFrame, { streamed: isOutput }) : undefined;
  }

  start(): void {
    this.stopWatching = followReadable(
      this.body,
      this.onData,
      (err) => this.onFinished(err),
      'tunnel response closed before its end',
    );
  }

  private readonly onData = (chunk: Buffer): void => {
    const transport = this.targets.transport;
    transport?.cork();
    try {
      this.handle(chunk);
    } catch (err) {
      transport?.uncork();
      this.body.destroy();
      this.settle(new TunnelProtocolError((err as Error).message));
      return;
    }
    transport?.uncork();
    if (this.blocked.size > 0) this.body.pause();
  };

  /** End of the turn: this turn's stdout in one channel write, its packets in one socket write. */
  private readonly onTurnEnd = (): void => {
    this.flushScheduled = false;
    if (this.done.signal.aborted || this.batchBytes === 0) return;
    const transport = this.targets.transport;
    transport?.cork();
    this.flushStdout();
    transport?.uncork();
    if (this.blocked.size > 0) this.body.pause();
  };

  private flushStdout(): void {
    const pieces = this.batch;
    if (this.batchBytes === 0) return;
    const data = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, this.batchBytes);
    this.batch = [];
    this.batchBytes = 0;
    // HTTP/2 chunks and SSH packets live outside the JS heap: keep V8 from mark-compacting for them
    // (see lib/yamux/young-gc.ts, the same pacing as the bridge's and mock Gitaly's pack data)
    paceYoungGc(data.length, YOUNG_GC_PACE_BYTES);
    this.send(this.targets.stdout, data);
  }

  private handle(chunk: Buffer): void {
    if (!this.reader) {
      this.stdout(chunk);
      return;
    }
    for (const f of this.reader.push(chunk)) {
      switch (f.type) {
        case ResponseFrame.stdout:
          this.stdout(f.payload);
          break;
        case ResponseFrame.stderr:
          if (f.payload.length > 0) this.outcome.wroteStderr = true;
          this.flushStdout();
          this.send(this.targets.stderr, f.payload);
          break;
        case ResponseFrame.exitStatus:
          this.outcome.exitStatus = f.payload.readInt32BE(0);
          break;
        case ResponseFrame.error:
          this.outcome.error = parseErrorFrame(f.payload);
          break;
        default:
          // a keepalive frame carries nothing
          break;
      }
    }
  }

  private stdout(data: Buffer): void {
    const out = this.filter ? this.filter.push(data) : data;
    if (out.length === 0) return;
    this.batch.push(out);
    this.batchBytes += out.length;
    if (this.batchBytes >= BATCH_BYTES) this.flushStdout();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.onTurnEnd);
    }
  }

  private send(target: Writable, data: Buffer): void {
    if (data.length === 0) return;
    if (target.write(data) || this.blocked.has(target)) return;
    this.blocked.add(target);
    waitDrain(target, this.done.signal).then(() => {
      this.blocked.delete(target);
      if (this.blocked.size === 0 && !this.done.signal.aborted) this.body.resume();
    }, ignore);
  }

  private onFinished(err: Error | undefined): void {
    if (!err && this.reader?.truncated)
      this.settle(new TunnelProtocolError('tunnel response ended inside a frame'));
    else this.settle(err);
  }

  private settle(err?: Error): void {
    if (this.done.signal.aborted) return;
    // what arrived before the end (or the failure) is the client's
    const transport = this.targets.transport;
    transport?.cork();
    this.flushStdout();
    transport?.uncork();
    this.done.abort();
    this.stopWatching();
    this.onSettled(err);
  }
}

function parseErrorFrame(payload: Buffer): { code: string; message: string } {
  try {
    const v = JSON.parse(payload.toString('utf8')) as { code?: unknown; message?: unknown };
    return {
      code: typeof v.code === 'string' ? v.code : 'UNKNOWN',
      message: typeof v.message === 'string' ? v.message : payload.toString('utf8'),
    };
  } catch {
    return { code: 'UNKNOWN', message: payload.toString('utf8') };
  }
}

/**
 * Splits git's ref advertisement (pkt-lines up to and including the first flush) from what follows.
 * `keep: 'advertisement'` relays it and drops the rest; `keep: 'rest'` drops it and relays the rest.
 */
export class AdvertisementFilter implements StdoutFilter {
  private reader: PktLineReader | undefined = new PktLineReader();
  /** True once the advertisement's flush has been seen. */
  complete = false;

  constructor(private readonly keep: 'advertisement' | 'rest') {}

  push(chunk: Buffer): Buffer {
    const reader = this.reader;
    if (!reader) return this.keep === 'rest' ? chunk : Buffer.alloc(0);
    const packets = reader.push(chunk);
    const advertised: Buffer[] = [];
    const after: Buffer[] = [];
    for (const p of packets) {
      if (this.complete) after.push(p.raw);
      else {
        advertised.push(p.raw);
        if (p.kind === 'flush') this.complete = true;
      }
    }
    if (this.complete) {
      after.push(reader.buffered);
      this.reader = undefined;
    }
    return Buffer.concat(this.keep === 'advertisement' ? advertised : after);
  }
}
