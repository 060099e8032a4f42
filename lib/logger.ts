import { type Logger, type LoggerOptions, pino } from 'pino';

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

/** One logger factory for every service: JSON to stdout, `service` on every line, secrets redacted. */
export function createLogger(
  service: string,
  level: string = process.env.LOG_LEVEL ?? 'info',
  extra: LoggerOptions = {},
) {
  return pino({
    level,
    base: { service, pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...extra,
  });
}
