/**
 * @file The one context every SSH command gets, as gitlab-shell's `internal/command/*` get their
 * `readwriter.ReadWriter` and parsed arguments: plain stdin/stdout/stderr streams (no ssh2 type
 * reaches a command), the arguments after the command name, who is asking and the session's
 * cancellation. A command resolves with the SSH exit status; a failure the user should read is
 * thrown as an `AppError` and rendered once, by the session (`ERROR: <message>`, exit 1).
 */
import type { GitCommandContext, GitCommandDeps } from '../tunnel/git-command.js';

/** Settings of the account commands. */
export interface AccountSettings {
  /** gitlab-shell `pat.allowed_scopes`: requested scopes outside it are dropped; empty = no filter. */
  patAllowedScopes: readonly string[];
}

/** What commands use from the router: the internal API, routing, the cells, the counters, settings. */
export interface CommandDeps extends GitCommandDeps {
  account: AccountSettings;
}

/**
 * The session's plain streams, who the session acts for (the key's id or a certificate's GitLab
 * username), `GIT_PROTOCOL`, the request's logger and cancellation (the fields the git engine takes),
 * plus the command's arguments and the router's services.
 */
export interface CommandContext extends GitCommandContext {
  /** The words after the command name (`git upload-pack` already folded into `git-upload-pack`). */
  args: readonly string[];
  deps: CommandDeps;
}

export interface Command {
  execute(ctx: CommandContext): Promise<number>;
}
