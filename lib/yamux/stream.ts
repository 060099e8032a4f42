import { Duplex } from 'node:stream';
import { YamuxError } from './errors.js';
import { Flag, FrameType, INITIAL_WINDOW } from './frame.js';
import type { YamuxSession } from './session.js';

/** What a stream needs from its session; narrow so a stream cannot reach session internals. */
export interface StreamLink {
  readonly maxWindow: number;
  readonly maxFrameData: number;
  readonly closeTimeoutMs: number;
  /** False once the session is over: nothing more may be sent. */
  isOpen(): boolean;
  send(type: FrameType, flags: number, streamId: number, length: number, payload?: readonly Buffer[]): void;
  cork(): void;
  uncork(): void;
  whenWritable(cb: () => void): void;
  /** The stream is closed both ways or reset: the session forgets it (idempotent). */
  release(stream: YamuxStream): void;
}

type WriteCallback = (err?: Error | null) => void;

/** Node's stream buffer sizes; the receive buffer itself is bounded by the window, not by this. */
const STREAM_HIGH_WATER_MARK = 64 * 1024;

/**
 * One yamux stream as a Node Duplex, so http2 (and grpc-js) can use it as their connection. Flow control is
 * the hashicorp rule; the Readable buffer is bounded by the window we granted, never by pausing the socket.
 */
export class YamuxStream extends Duplex {
  readonly id: number;
  readonly session: YamuxSession;
  private readonly link: StreamLink;
  private sendWindow = INITIAL_WINDOW;
  private recvWindow = INITIAL_WINDOW;
  private localFin = false;
  private remoteFin = false;
  /** RST sent or received, or the session is over: nothing more goes on the wire for this stream. */
  private dead = false;
  private queue: Buffer[] = [];
  private queued = 0;
  private writeCb: WriteCallback | undefined;
  /** Tells a drain waiter from an older write apart (Node reuses one callback function for all writes). */
  private writeSeq = 0;
  private openTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;

  /** @internal Streams are made by `YamuxSession.open()` or arrive through its 'stream' event. */
  constructor(session: YamuxSession, link: StreamLink, id: number) {
    super({
      allowHalfOpen: true,
      readableHighWaterMark: STREAM_HIGH_WATER_MARK,
      writableHighWaterMark: STREAM_HIGH_WATER_MARK,
    });
    this.session = session;
    this.link = link;
    this.id = id;
  }

  /**
   * Every way of consuming a Readable (read(), 'readable', 'data'/pipe via flow(), async iteration) goes
   * through read(), so the window rule runs here, after the bytes have left the buffer. `_read` cannot
   * serve: Node calls it before removing the bytes and then not again until the next push, which never
   * comes once the peer's window is 0.
   */
  override read(size?: number): Buffer | null {
    const chunk = super.read(size) as Buffer | null;
    if (chunk !== null) this.sendWindowUpdate(0);
    return chunk;
  }

  /** Data is pushed as frames arrive; demand is tracked in read(). */
  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, cb: WriteCallback): void {
    this.enqueue([chunk], cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: WriteCallback): void {
    this.enqueue(
      chunks.map((c) => c.chunk),
      cb,
    );
  }

  override _final(cb: WriteCallback): void {
    if (this.dead || !this.link.isOpen()) {
      cb(new YamuxError('YAMUX_SESSION_CLOSED', `stream ${this.id}: cannot send FIN, stream is closed`));
      return;
    }
    this.localFin = true;
    this.link.send(FrameType.WindowUpdate, Flag.FIN, this.id, 0);
    if (this.remoteFin) this.link.release(this);
    else this.startCloseTimer();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    clearTimeout(this.openTimer);
    clearTimeout(this.closeTimer);
    const fullyClosed = this.localFin && this.remoteFin;
    if (!this.dead && !fullyClosed && this.link.isOpen()) {
      this.link.send(FrameType.WindowUpdate, Flag.RST, this.id, 0);
    }
    this.dead = true;
    this.queue = [];
    this.queued = 0;
    this.completeWrite(err ?? new YamuxError('YAMUX_STREAM_RESET', `stream ${this.id} was destroyed`));
    this.link.release(this);
    cb(err);
  }

  /**
   * @internal hashicorp's receiver rule: grant what the application has consumed once that is at least half
   * the window; `flags` (SYN/ACK) force a frame even with delta 0.
   */
  sendWindowUpdate(flags: number): void {
    if (flags === 0 && (this.remoteFin || this.dead || this.destroyed || !this.link.isOpen())) return;
    const max = this.link.maxWindow;
    const delta = max - this.readableLength - this.recvWindow;
    if (flags === 0 && delta < max / 2) return;
    const grant = Math.max(0, delta);
    this.recvWindow += grant;
    this.link.send(FrameType.WindowUpdate, flags, this.id, grant);
  }

  /** @internal The decoder has already checked the frame against this. */
  get receiveWindow(): number {
    return this.recvWindow;
  }

  /** @internal */
  onData(chunk: Buffer): void {
    this.recvWindow -= chunk.length;
    if (this.remoteFin || this.dead || this.destroyed) return;
    this.push(chunk);
    // A flowing stream with an empty buffer emits 'data' inside push() without calling read().
    this.sendWindowUpdate(0);
  }

  /** @internal */
  onWindowUpdate(delta: number): void {
    this.sendWindow += delta;
    if (this.writeCb !== undefined && this.queued > 0) this.pump();
  }

  /** @internal */
  onAck(): void {
    clearTimeout(this.openTimer);
    this.openTimer = undefined;
  }

  /** @internal */
  onFin(): void {
    if (this.remoteFin || this.dead) return;
    this.remoteFin = true;
    if (!this.destroyed) this.push(null);
    if (this.localFin) {
      clearTimeout(this.closeTimer);
      this.link.release(this);
    }
  }

  /** @internal */
  onReset(): void {
    if (this.dead) return;
    this.dead = true;
    this.destroy(new YamuxError('YAMUX_STREAM_RESET', `stream ${this.id} was reset by the peer`));
  }

  /** @internal The session is over; `err` is undefined for streams the application never saw. */
  onSessionEnd(err: Error | undefined): void {
    this.dead = true;
    this.destroy(err);
  }

  /** @internal */
  startOpenTimer(ms: number, onTimeout: () => void): void {
    if (ms <= 0) return;
    this.openTimer = setTimeout(onTimeout, ms);
    this.openTimer.unref();
  }

  private startCloseTimer(): void {
    const ms = this.link.closeTimeoutMs;
    if (ms <= 0) return;
    this.closeTimer = setTimeout(() => {
      this.destroy(
        new YamuxError('YAMUX_CLOSE_TIMEOUT', `stream ${this.id}: no FIN from the peer in ${ms} ms`),
      );
    }, ms);
    this.closeTimer.unref();
  }

  private enqueue(buffers: Buffer[], cb: WriteCallback): void {
    if (this.dead || !this.link.isOpen()) {
      cb(new YamuxError('YAMUX_SESSION_CLOSED', `stream ${this.id} is closed`));
      return;
    }
    for (const b of buffers) {
      if (b.length === 0) continue;
      this.queue.push(b);
      this.queued += b.length;
    }
    this.writeCb = cb;
    this.writeSeq += 1;
    this.pump();
  }

  /**
   * Sends as much of the queued write as the peer's window allows, in frames of at most maxFrameData, all in
   * one cork. The write is reported done only when everything went out and the socket has room again, so a
   * full window or a slow socket stalls the writer instead of growing memory.
   */
  private pump(): void {
    if (this.queued > 0) {
      this.link.cork();
      try {
        while (this.queued > 0 && this.sendWindow > 0) {
          const n = Math.min(this.queued, this.sendWindow, this.link.maxFrameData);
          this.sendWindow -= n;
          this.link.send(FrameType.Data, 0, this.id, n, this.takeQueued(n));
        }
      } finally {
        this.link.uncork();
      }
      if (this.queued > 0) return;
    }
    const seq = this.writeSeq;
    this.link.whenWritable(() => {
      if (this.writeSeq === seq) this.completeWrite(null);
    });
  }

  /** Cuts `n` bytes off the front of the queue as views, never copies. */
  private takeQueued(n: number): Buffer[] {
    const parts: Buffer[] = [];
    let need = n;
    let i = 0;
    while (need > 0) {
      const head = this.queue[i]!;
      if (head.length <= need) {
        parts.push(head);
        need -= head.length;
        i += 1;
      } else {
        parts.push(head.subarray(0, need));
        this.queue[i] = head.subarray(need);
        need = 0;
      }
    }
    this.queue.splice(0, i);
    this.queued -= n;
    return parts;
  }

  private completeWrite(err: Error | null): void {
    const cb = this.writeCb;
    if (cb === undefined) return;
    this.writeCb = undefined;
    cb(err);
  }
}
