import { type ServiceError, status } from '@grpc/grpc-js';
import { AppError, type ErrorFactory, errorFactory } from '../lib/errors.js';

/**
 * The HTTP status grpc-gateway (v2, `runtime.HTTPStatusFromCode`) answers for each gRPC code, so
 * the REST side maps exactly as the real service's gateway does.
 */
export const HTTP_STATUS_OF_GRPC: Readonly<Record<status, number>> = {
  [status.OK]: 200,
  [status.CANCELLED]: 499,
  [status.UNKNOWN]: 500,
  [status.INVALID_ARGUMENT]: 400,
  [status.DEADLINE_EXCEEDED]: 504,
  [status.NOT_FOUND]: 404,
  [status.ALREADY_EXISTS]: 409,
  [status.PERMISSION_DENIED]: 403,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.FAILED_PRECONDITION]: 400,
  [status.ABORTED]: 409,
  [status.OUT_OF_RANGE]: 400,
  [status.UNIMPLEMENTED]: 501,
  [status.INTERNAL]: 500,
  [status.UNAVAILABLE]: 503,
  [status.DATA_LOSS]: 500,
  [status.UNAUTHENTICATED]: 401,
};

/**
 * The Topology Service's error registry: a stable `code` for logs, the gRPC status the client sees
 * and, through the table above, the HTTP status of the REST answer.
 */
export class TopologyError extends AppError {
  readonly grpcCode: status;

  constructor(code: string, grpcCode: status, message: string, cause?: unknown) {
    super(code, message, { statusCode: HTTP_STATUS_OF_GRPC[grpcCode], cause });
    this.name = 'TopologyError';
    this.grpcCode = grpcCode;
  }
}

function define(code: string, grpcCode: status): ErrorFactory<TopologyError> {
  return errorFactory(
    code,
    HTTP_STATUS_OF_GRPC[grpcCode],
    (message, cause) => new TopologyError(code, grpcCode, message, cause),
  );
}

export const InvalidArgument = define('TOPOLOGY_INVALID_ARGUMENT', status.INVALID_ARGUMENT);
/** Classify: no cell holds the claim(s), the session prefix or the cell id. gitlab-shell does not retry it. */
export const ClaimNotFound = define('TOPOLOGY_CLAIM_NOT_FOUND', status.NOT_FOUND);
export const CellNotFound = define('TOPOLOGY_CELL_NOT_FOUND', status.NOT_FOUND);
export const RecordNotFound = define('TOPOLOGY_RECORD_NOT_FOUND', status.NOT_FOUND);
export const LeaseNotFound = define('TOPOLOGY_LEASE_NOT_FOUND', status.NOT_FOUND);
/** `claimConflict: reject`: another cell holds (or is claiming) the key. */
export const ClaimConflict = define('TOPOLOGY_CLAIM_CONFLICT', status.ALREADY_EXISTS);
export const TooManyLeases = define('TOPOLOGY_TOO_MANY_LEASES', status.RESOURCE_EXHAUSTED);
/** REST: no `CF-Access-Client-Id`/`-Secret` while the service requires them. */
export const Unauthenticated = define('TOPOLOGY_UNAUTHENTICATED', status.UNAUTHENTICATED);
/** REST: a `CF-Access-*` token that is not the configured one. */
export const PermissionDenied = define('TOPOLOGY_PERMISSION_DENIED', status.PERMISSION_DENIED);
/** REST: no such path (grpc-gateway's routing error "Not Found"). */
export const RouteNotFound = define('TOPOLOGY_ROUTE_NOT_FOUND', status.NOT_FOUND);
/** REST: a known path with another method (grpc-gateway: 501 "Method Not Allowed"). */
export const MethodNotAllowed = define('TOPOLOGY_METHOD_NOT_ALLOWED', status.UNIMPLEMENTED);
/** Readiness while stopping. */
export const NotServing = define('TOPOLOGY_NOT_SERVING', status.UNAVAILABLE);
export const Internal = define('TOPOLOGY_INTERNAL', status.INTERNAL);

/** Any thrown value → a TopologyError (unknown errors become INTERNAL with their message). */
export function asTopologyError(err: unknown): TopologyError {
  if (err instanceof TopologyError) return err;
  return Internal(err instanceof Error ? err.message : String(err), err);
}

/** The object grpc-js turns into the call's final status. */
export function toServiceError(err: TopologyError): Partial<ServiceError> {
  return { code: err.grpcCode, details: err.message, message: err.message };
}

/** A failure a world's control op decided (`world.ts`): any gRPC code, with the fault that fired. */
export class InjectedError extends TopologyError {
  constructor(
    grpcCode: status,
    message: string,
    readonly fault: Record<string, unknown>,
  ) {
    super('TOPOLOGY_INJECTED', grpcCode, message);
  }
}

export function Injected(grpcCode: status, message: string, fault: Record<string, unknown>): InjectedError {
  return new InjectedError(grpcCode, message, fault);
}
