import { writeSync } from 'node:fs';
import { type Logger, type LoggerOptions, pino } from 'pino';
import { FdDestination } from './log-destination.js';

export type { Logger };

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'token',
  '*.token',
  '*.*.token',
  'secret',
  '*.secret',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers["gitlab-shell-api-request"]',
  'headers["gitlab-workhorse-api-request"]',
  'req.headers.authorization',
  'req.headers["gitlab-shell-api-request"]',
  'req.headers["gitlab-workhorse-api-request"]',
  'req.headers["private-token"]',
  'req.headers.cookie',
  'GitalyServer.token',
  'gitaly.token',
];

/** Tells stderr, if it is still there, that log lines are being dropped from now on. */
function reportClosedStdout(service: string, code: string): void {
  try {
    writeSync(2, `${service}: log output (stdout) failed with ${code}; further log lines are dropped\n`);
  } catch {
    // stderr is gone as well
  }
}

/**
 * One logger factory for every service: JSON to stdout, `service` on every line, secrets redacted.
 * Lines are written synchronously to fd 1 (`FdDestination`); a stdout whose reader is gone ends
 * logging instead of blocking or throwing, so a service always stops on SIGTERM.
 */
export function createLogger(
  service: string,
  level: string = process.env.LOG_LEVEL ?? 'info',
  extra: LoggerOptions = {},
) {
  return pino(
    {
      level,
      base: { service, pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      ...extra,
    },
    new FdDestination(1, { onClose: (code) => reportClosedStdout(service, code) }),
  );
}
