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

/** Defines a factory for one registry entry: `const NotFound = defineError('X_NOT_FOUND', 404)`. */
export function defineError(code: string, statusCode: number, system = statusCode >= 500) {
  return (message: string, cause?: unknown) => new AppError(code, message, { statusCode, system, cause });
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
