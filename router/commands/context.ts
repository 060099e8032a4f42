/**
 * @file The one context every SSH command gets, as gitlab-shell's `internal/command/*` get their
 * `readwriter.ReadWriter` and parsed arguments: plain stdin/stdout/stderr streams (no ssh2 type
 * reaches a command), the arguments after the command name, who is asking and the session's
 * cancellation. A command resolves with the SSH exit status; a failure the user should read is
 * thrown as an `AppError` and rendered once, by the session (`ERROR: <message>`, exit 1).
 */
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../lib/logger.js';
import type { ShellActor } from '../cells/actor.js';
import type { GitCommandContext, GitCommandDeps } from '../tunnel/git-command.js';

export interface CommandIO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

/** Settings of the account commands. */
export interface AccountSettings {
  /** gitlab-shell `pat.allowed_scopes`: requested scopes outside it are dropped; empty = no filter. */
  patAllowedScopes: readonly string[];
}

/** What commands use from the router: the internal API, routing, the cells, the counters, settings. */
export interface CommandDeps extends GitCommandDeps {
  account: AccountSettings;
}

export interface CommandContext {
  io: CommandIO;
  /** The words after the command name (`git upload-pack` already folded into `git-upload-pack`). */
  args: readonly string[];
  /** Who the session acts for: the key's id, or a certificate's GitLab username. */
  actor: ShellActor;
  remoteIp: string;
  requestId: string;
  /** `GIT_PROTOCOL` as the client sent it in an `env` request. */
  gitProtocol: string | undefined;
  log: Logger;
  /** Aborted when the client leaves or shutdown cancels the session. */
  signal: AbortSignal;
  /** The connection's socket, for write coalescing of tunnel output. */
  transport?: GitCommandContext['transport'];
  deps: CommandDeps;
}

export interface Command {
  execute(ctx: CommandContext): Promise<number>;
}
