import type { Logger } from './logger.js';
import { watchSupervisor } from './supervisor-watch.js';

/**
 * The one way every service stops: SIGINT, SIGTERM or the loss of its supervisor (when
 * `SUPERVISOR_PID` is set) runs `close` once, logs `stopped` and exits 0 (1 when closing failed).
 * Call it before logging `listening`, so whoever waits for that line may signal at once.
 */
export function stopOnSignals(opts: {
  logger: Logger;
  supervisorPid: number | undefined;
  close: () => Promise<void>;
  /** Extra fields for the `shutting down` line (e.g. in-flight count, grace period). */
  details?: () => Record<string, unknown>;
}): void {
  let stopping = false;
  const stop = (signal?: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    opts.logger.info({ signal, ...opts.details?.() }, 'shutting down');
    opts.close().then(
      () => {
        opts.logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        opts.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const pid = opts.supervisorPid;
  if (pid !== undefined) {
    watchSupervisor(pid, () => {
      opts.logger.warn({ supervisor_pid: pid }, 'supervisor gone');
      stop();
    });
  }
}
