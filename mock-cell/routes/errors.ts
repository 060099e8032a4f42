import { STATUS_CODES } from 'node:http';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../lib/errors.js';

/**
 * Picks status and message for a failed request and logs it: client faults keep their message,
 * our own faults answer `<status> <reason>` and are logged with the cause.
 */
export function errorResponse(
  err: FastifyError | Error,
  log: FastifyBaseLogger,
): { status: number; message: string } {
  const status = isAppError(err) ? err.statusCode : ((err as FastifyError).statusCode ?? 500);
  const system = isAppError(err) ? err.system : status >= 500;
  if (system) {
    log.error({ err }, 'request failed');
    return { status, message: `${status} ${STATUS_CODES[status] ?? 'Error'}` };
  }
  log.info({ code: (err as FastifyError).code, message: err.message }, 'request rejected');
  return { status, message: err.message };
}

export function defaultErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  const { status, message } = errorResponse(err, req.log);
  return reply.code(status).send({ message });
}
