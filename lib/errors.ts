/**
 * Base error for every service. Each service keeps one registry of codes built on this class,
 * so logs and responses carry a stable `code` instead of free text.
 */
export class AppError extends Error {
  readonly code: string;
  /** HTTP status used when the error is answered before a response has started. */
  readonly statusCode: number;
  /** true when the fault is ours (log at error level); false for policy or client faults. */
  readonly system: boolean;

  constructor(
    code: string,
    message: string,
    opts: { statusCode?: number; system?: boolean; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.statusCode = opts.statusCode ?? 500;
    this.system = opts.system ?? this.statusCode >= 500;
  }
}

/**
 * One registry entry: call it to make the error; its `code` (jose's `static code`) lets callers
 * branch without repeating the string: `if (TopologyInvalid.is(err))` or `err.code === NotFound.code`.
 */
export interface ErrorFactory<E extends AppError = AppError> {
  (message: string, cause?: unknown): E;
  readonly code: string;
  readonly statusCode: number;
  /** True for an error this factory made (same code). */
  is(err: unknown): err is E;
}

/** Wraps `make` into a factory carrying `code` and `statusCode` (for registries with a subclass). */
export function errorFactory<E extends AppError>(
  code: string,
  statusCode: number,
  make: (message: string, cause?: unknown) => E,
): ErrorFactory<E> {
  const factory = (message: string, cause?: unknown) => make(message, cause);
  return Object.assign(factory, {
    code,
    statusCode,
    is: (err: unknown): err is E => isAppError(err) && err.code === code,
  });
}

/** Defines a factory for one registry entry: `const NotFound = defineError('X_NOT_FOUND', 404)`. */
export function defineError(code: string, statusCode: number, system = statusCode >= 500): ErrorFactory {
  return errorFactory(
    code,
    statusCode,
    (message, cause) => new AppError(code, message, { statusCode, system, cause }),
  );
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
