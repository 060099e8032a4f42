import type { AppError } from '../lib/errors.js';
import type { ServerReply } from './exchange.js';
import type { TunnelStream, TunnelStreamResult } from './tunnel-stream.js';

/** Counts the requests being served (every route) so that shutdown can wait for them. */
export class RequestTracker {
  private count = 0;
  private readonly idleWaiters = new Set<() => void>();

  get inFlight(): number {
    return this.count;
  }

  /** Counts the request of `res` until its response closes. */
  track(res: ServerReply): void {
    this.count += 1;
    res.once('close', () => {
      this.count -= 1;
      if (this.count === 0) for (const wake of this.idleWaiters) wake();
    });
  }

  /** Resolves when no request is in flight, or after `ms`. */
  waitIdle(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.count === 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.idleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.idleWaiters.add(done);
    });
  }
}

/** The tunnels streaming right now, so that shutdown can end the ones that outlive the grace period. */
export class TunnelRegistry {
  private readonly live = new Set<TunnelStream>();

  get size(): number {
    return this.live.size;
  }

  /** Runs `tunnel` to its end, registered meanwhile. */
  async run(tunnel: TunnelStream): Promise<TunnelStreamResult> {
    this.live.add(tunnel);
    try {
      return await tunnel.run();
    } finally {
      this.live.delete(tunnel);
    }
  }

  /** Ends every registered tunnel in-band with `err` (outcome `system`). */
  abortAll(err: AppError): void {
    for (const tunnel of this.live) tunnel.abort(err, 'system');
  }
}
