/** @file One log line per call, the same for both transports. */
import { status } from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import type { TopologyError } from './errors.js';

/** Probes come every few seconds: their successes are logged at `debug`. */
const PROBES: ReadonlySet<string> = new Set([
  'ReadinessProbe',
  'LivenessProbe',
  'GET /readiness',
  'GET /liveness',
]);

/** One log line per call: `info` for answers (NOT_FOUND included), `warn`/`error` for failures. */
export function logCall(
  logger: Logger,
  fields: Record<string, unknown> & { method: string; transport: 'grpc' | 'rest' },
  err: TopologyError | undefined,
): void {
  if (!err) {
    if (PROBES.has(fields.method)) logger.debug({ ...fields, code: 'OK' }, 'call');
    else logger.info({ ...fields, code: 'OK' }, 'call');
    return;
  }
  const line = { ...fields, code: status[err.grpcCode], error_code: err.code, error: err.message };
  if (err.system) logger.error({ ...line, err: err.cause ?? err }, 'call');
  else if (err.grpcCode === status.NOT_FOUND) logger.info(line, 'call');
  else logger.warn(line, 'call');
}
