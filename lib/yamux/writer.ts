import type { Duplex } from 'node:stream';
import { encodeHeader, type FrameHeader, type FrameType, HEADER_SIZE, PROTOCOL_VERSION } from './frame.js';

export interface WriterStats {
  framesOut: number;
  bytesOut: number;
}

/**
 * Puts frames on the socket. It never waits: control frames (ACKs, window updates, pings) must go out even
 * while the socket is backed up, or both sides could wait on each other. Stream data is paced instead by
 * streams asking `whenWritable()` before they report a write as done.
 */
export class FrameWriter {
  private drainWaiters: Array<() => void> = [];
  private corks = 0;

  constructor(
    private readonly socket: Duplex,
    private readonly stats: WriterStats,
    private readonly onFrame: ((direction: 'in' | 'out', header: FrameHeader) => void) | undefined,
  ) {
    socket.on('drain', () => this.flushWaiters());
  }

  get usable(): boolean {
    return !this.socket.destroyed && !this.socket.writableEnded;
  }

  /**
   * Header and payload pieces go out as separate writes inside one cork, so the payload is never copied and a
   * net.Socket still sends the whole frame with one writev.
   */
  send(type: FrameType, flags: number, streamId: number, length: number, payload?: readonly Buffer[]): void {
    if (!this.usable) return;
    const header = { type, flags, streamId, length };
    this.stats.framesOut += 1;
    this.stats.bytesOut += HEADER_SIZE + (payload === undefined ? 0 : length);
    this.onFrame?.('out', { version: PROTOCOL_VERSION, ...header });
    if (payload === undefined || payload.length === 0) {
      this.socket.write(encodeHeader(header));
      return;
    }
    this.socket.cork();
    this.socket.write(encodeHeader(header));
    for (const piece of payload) this.socket.write(piece);
    this.socket.uncork();
  }

  /** Lets a stream batch several frames into one writev. */
  cork(): void {
    if (!this.usable) return;
    this.corks += 1;
    this.socket.cork();
  }

  uncork(): void {
    if (this.corks === 0) return;
    this.corks -= 1;
    this.socket.uncork();
  }

  /** Runs `cb` now if the socket has room, else after its next 'drain' (or when the writer is shut). */
  whenWritable(cb: () => void): void {
    if (!this.usable || !this.socket.writableNeedDrain) {
      cb();
      return;
    }
    this.drainWaiters.push(cb);
  }

  private flushWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const cb of waiters) cb();
  }

  /**
   * Ends the socket so frames already queued (a final GoAway) still leave, keeps reading until the peer
   * closes, and destroys it after `graceMs` if the peer never does.
   */
  shutdown(graceMs: number): void {
    this.flushWaiters();
    if (this.socket.destroyed) return;
    const timer = setTimeout(() => this.socket.destroy(), graceMs);
    timer.unref();
    this.socket.once('close', () => clearTimeout(timer));
    if (!this.socket.writableEnded) this.socket.end();
  }
}
