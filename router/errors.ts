import { AppError, defineError } from '../lib/errors.js';

/**
 * The router's error registry. `message` is what an SSH user sees after `ERROR: ` (GitLab Shell's
 * wording where GitLab Shell has one); `system` separates incidents (log at error) from policy
 * answers and client faults.
 */
export const RouterError = {
  /** Transport failure talking to a cell's internal API (GitLab Shell: "Internal API unreachable"). */
  internalApiUnreachable: defineError('ROUTER_ERR_INTERNAL_API_UNREACHABLE', 502),
  /** Internal API answered outside 2xx without a usable message, or with a malformed body. */
  internalApi: defineError('ROUTER_ERR_INTERNAL_API', 502),
  /** `/allowed` said no (status false or a 4xx with a message): shown to the user verbatim. */
  accessDenied: defineError('ROUTER_ERR_ACCESS_DENIED', 403),
  /** The tunnel answered an error status or could not be reached. */
  tunnelUnavailable: defineError('ROUTER_ERR_TUNNEL_UNAVAILABLE', 502),
  /** The tunnel's framed response broke the framing rules. */
  tunnelProtocol: defineError('ROUTER_ERR_TUNNEL_PROTOCOL', 502),
  /** Something the router cannot route with (e.g. no `gl_project_path` in `/allowed`). */
  cellsRouting: defineError('ROUTER_ERR_CELLS_ROUTING', 502),
  /** A repository path GitLab would never route (`../x`, `~user/x`, one segment). */
  projectNotFound: defineError('ROUTER_ERR_PROJECT_NOT_FOUND', 404),
  /** discover failed (GitLab Shell: "Failed to get username: ..."). */
  discover: defineError('ROUTER_ERR_DISCOVER', 502),
  /** An account command refused: its usage, or the cell's `success: false` message. */
  accountRefused: defineError('ROUTER_ERR_ACCOUNT_REFUSED', 400),
  /** The SSH client went away, or the router is shutting down. */
  cancelled: defineError('ROUTER_ERR_CANCELLED', 499, false),
} as const;

/**
 * A command failure carrying more than its message: the exit status (a framed tunnel's own status
 * may be other than 1) and whether the user has already read the error on stderr (relayed from the
 * cell). The session renders it without a second `ERROR:` box. Code, status and `system` are those
 * of the registry error it wraps.
 */
export class CommandFailed extends AppError {
  constructor(
    error: AppError,
    readonly exitStatus: number,
    readonly shown: boolean,
  ) {
    super(error.code, error.message, {
      statusCode: error.statusCode,
      system: error.system,
      cause: error.cause,
    });
    this.name = 'CommandFailed';
  }
}

/** A cell does not own the project: `421 Misdirected Request` with `X-Gitlab-Cell-Redirect`. */
export class MisdirectedError extends AppError {
  constructor(
    message: string,
    /** The owning cell's name as the answering cell sees it (header `X-Gitlab-Cell-Redirect`). */
    readonly redirectCell: string | undefined,
  ) {
    super('ROUTER_ERR_MISDIRECTED', message, { statusCode: 421, system: false });
    this.name = 'MisdirectedError';
  }
}

/** Rails' answer for a project that does not exist or is not visible, as GitLab Shell relays it. */
export const PROJECT_NOT_FOUND_MESSAGE =
  "The project you were looking for could not be found or you don't have permission to view it.";
export const REMOTE_UNAVAILABLE_MESSAGE = 'Remote repository is unavailable';
