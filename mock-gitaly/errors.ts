import { type ServiceError, status } from '@grpc/grpc-js';
import { AppError, type ErrorFactory, errorFactory } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';

/**
 * mock Gitaly's error registry. Every failure a call can end with is one of these: a stable `code` for
 * logs and the gRPC status the client sees, with Gitaly's wording in the message.
 */
export class RpcError extends AppError {
  readonly grpcCode: status;

  constructor(
    code: string,
    grpcCode: status,
    message: string,
    opts: { statusCode: number; cause?: unknown },
  ) {
    super(code, message, { statusCode: opts.statusCode, cause: opts.cause });
    this.name = 'RpcError';
    this.grpcCode = grpcCode;
  }
}

/** One registry entry; the factory carries its `code` (`Unimplemented.code`, `Unimplemented.is(err)`). */
function defineRpcError(code: string, grpcCode: status, statusCode: number): ErrorFactory<RpcError> {
  return errorFactory(
    code,
    statusCode,
    (message, cause) => new RpcError(code, grpcCode, message, { statusCode, cause }),
  );
}

export const Unauthenticated = defineRpcError('GITALY_UNAUTHENTICATED', status.UNAUTHENTICATED, 401);
export const PermissionDenied = defineRpcError('GITALY_PERMISSION_DENIED', status.PERMISSION_DENIED, 403);
export const InvalidArgument = defineRpcError('GITALY_INVALID_ARGUMENT', status.INVALID_ARGUMENT, 400);
export const RepositoryNotFound = defineRpcError('GITALY_REPOSITORY_NOT_FOUND', status.NOT_FOUND, 404);
export const NegotiationTimeout = defineRpcError('GITALY_NEGOTIATION_TIMEOUT', status.DEADLINE_EXCEEDED, 504);
export const ClientCanceled = defineRpcError('GITALY_CLIENT_CANCELED', status.CANCELLED, 499);
export const GitFailed = defineRpcError('GITALY_GIT_FAILED', status.INTERNAL, 500);
export const Unimplemented = defineRpcError('GITALY_UNIMPLEMENTED', status.UNIMPLEMENTED, 501);
/** Gitaly's concurrency limiter refused the call (`concurrency.ts`; Gitaly's texts). */
export const ResourceExhausted = defineRpcError('GITALY_RESOURCE_EXHAUSTED', status.RESOURCE_EXHAUSTED, 429);
export const Internal = defineRpcError('GITALY_INTERNAL', status.INTERNAL, 500);
/** The sidechannel could not be opened (Gitaly: `Internal` "opennig sidechannel: …", sic). */
export const SidechannelFailed = defineRpcError('GITALY_SIDECHANNEL_FAILED', status.INTERNAL, 500);

/** Any thrown value → an RpcError (unknown errors become INTERNAL with their message). */
export function asRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  return Internal(err instanceof Error ? err.message : String(err), err);
}

/** The object grpc-js turns into the call's final status. */
export function toServiceError(err: RpcError): Partial<ServiceError> {
  return { code: err.grpcCode, details: err.message, message: err.message };
}

/**
 * The call's one failure line: `rpc failed` at error level for our faults, `rpc rejected` at info for
 * the client's; returns the error as an RpcError for the status.
 */
export function logRpcFailure(logger: Logger, err: unknown, startedMs: number): RpcError {
  const e = asRpcError(err);
  const fields = {
    code: e.code,
    grpc_code: e.grpcCode,
    error: e.message,
    duration_ms: Date.now() - startedMs,
  };
  if (e.system) logger.error(fields, 'rpc failed');
  else logger.info(fields, 'rpc rejected');
  return e;
}
