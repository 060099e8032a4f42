import { performance } from 'node:perf_hooks';
import { YamuxError } from './errors.js';

interface PendingPing {
  startedAt: number;
  resolve: (rttMs: number) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Outstanding pings by opaque value. The value is ours to choose; the peer echoes it in the ACK, which is
 * how an answer is matched to its ping.
 */
export class Pinger {
  private readonly pending = new Map<number, PendingPing>();
  private next = 1;
  private keepAliveTimer: NodeJS.Timeout | undefined;

  constructor(private readonly sendPing: (value: number) => void) {}

  ping(timeoutMs = 0): Promise<number> {
    const value = this.next;
    this.next = this.next >= 0xffffffff ? 1 : this.next + 1;
    return new Promise<number>((resolve, reject) => {
      const entry: PendingPing = { startedAt: performance.now(), resolve, reject, timer: undefined };
      if (timeoutMs > 0) {
        entry.timer = setTimeout(() => {
          this.pending.delete(value);
          reject(new YamuxError('YAMUX_PING_TIMEOUT', `ping not answered in ${timeoutMs} ms`));
        }, timeoutMs);
        entry.timer.unref();
      }
      this.pending.set(value, entry);
      this.sendPing(value);
    });
  }

  /** An ACK for a value we never sent (or already timed out) is ignored. */
  onAck(value: number): void {
    const entry = this.pending.get(value);
    if (entry === undefined) return;
    this.pending.delete(value);
    clearTimeout(entry.timer);
    entry.resolve(performance.now() - entry.startedAt);
  }

  /** Pings every `intervalMs` (0 = never); one unanswered for `timeoutMs` calls `onDead`. */
  keepAlive(intervalMs: number, timeoutMs: number, onDead: (err: YamuxError) => void): void {
    if (intervalMs <= 0) return;
    this.keepAliveTimer = setInterval(() => {
      this.ping(timeoutMs).catch((err: unknown) => {
        if (err instanceof YamuxError && err.code === 'YAMUX_PING_TIMEOUT') onDead(err);
      });
    }, intervalMs);
    this.keepAliveTimer.unref();
  }

  /** Stops the keepalive and fails every outstanding ping. */
  rejectAll(err: Error): void {
    clearInterval(this.keepAliveTimer);
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(err);
    }
    this.pending.clear();
  }
}
