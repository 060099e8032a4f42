import { writeSync } from 'node:fs';

/** Writes bytes to a file descriptor and returns how many were taken (`fs.writeSync`; tests inject their own). */
export type FdWrite = (fd: number, data: Uint8Array) => number;

export interface FdDestinationOptions {
  write?: FdWrite;
  /** Bytes kept for a full non-blocking descriptor; whole lines beyond it are dropped. */
  maxPendingBytes?: number;
  /** Delay before retrying a full non-blocking descriptor. */
  retryMs?: number;
  /** Called once when the descriptor fails for good, with the error code (`EPIPE`, `EBADF`, …). */
  onClose?: (code: string) => void;
}

/** Errors after which the same write may succeed later. */
const TRANSIENT = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR']);

/**
 * A pino destination writing each line straight to a file descriptor, as `process.stdout` does for
 * files and pipes: a line is out before the next statement runs, so nothing is left to flush when
 * the process exits. Unlike pino's default (sonic-boom), it never waits in a loop and never throws:
 *
 * - a reader that is gone (`EPIPE`), a closed descriptor (`EBADF`) or any other lasting error ends
 *   logging for good: later lines are dropped (sonic-boom's exit-time `flushSync` retries such an
 *   error forever, so a service with a dead log pipe hung on SIGTERM);
 * - a full non-blocking descriptor (`EAGAIN`) keeps the rest in memory, up to `maxPendingBytes`, and
 *   retries on an unreferenced timer and once more at exit.
 */
export class FdDestination {
  private readonly writeFn: FdWrite;
  private readonly maxPendingBytes: number;
  private readonly retryMs: number;
  private readonly onClose: ((code: string) => void) | undefined;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closedBy: string | undefined;
  private exitHooked = false;
  private readonly flushAtExit = () => this.flush();

  constructor(
    private readonly fd: number,
    opts: FdDestinationOptions = {},
  ) {
    this.writeFn = opts.write ?? writeSync;
    this.maxPendingBytes = opts.maxPendingBytes ?? 8 * 1024 * 1024;
    this.retryMs = opts.retryMs ?? 50;
    this.onClose = opts.onClose;
  }

  write(line: string): void {
    if (this.closedBy !== undefined) return;
    const data = Buffer.from(line);
    if (this.pending.length > 0 && this.pendingBytes + data.length > this.maxPendingBytes) return;
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pending.length === 1) this.flush();
  }

  /** Writes as much of what is pending as the descriptor takes now; returns without waiting. */
  flush(): void {
    while (this.closedBy === undefined) {
      const head = this.pending[0];
      if (head === undefined) break;
      let written: number;
      try {
        written = this.writeFn(this.fd, head);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
        if (TRANSIENT.has(code)) break;
        this.close(code);
        return;
      }
      if (written <= 0) break;
      this.pendingBytes -= Math.min(written, head.length);
      if (written >= head.length) this.pending.shift();
      else this.pending[0] = head.subarray(written);
    }
    this.retryWhilePending();
  }

  private retryWhilePending(): void {
    if (this.pending.length === 0 || this.closedBy !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      if (this.exitHooked) process.off('exit', this.flushAtExit);
      this.exitHooked = false;
      return;
    }
    if (!this.exitHooked) process.on('exit', this.flushAtExit);
    this.exitHooked = true;
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.flush();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private close(code: string): void {
    this.closedBy = code;
    this.pending.length = 0;
    this.pendingBytes = 0;
    this.retryWhilePending();
    this.onClose?.(code);
  }
}
