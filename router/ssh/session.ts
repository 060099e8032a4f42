import { randomUUID } from 'node:crypto';
import type { ServerChannel, Session } from 'ssh2';
import { isAppError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { failureOutcome, type Outcome } from '../../lib/outcome.js';
import { RouterError } from '../errors.js';
import { type GitCommandContext, type GitCommandDeps, runGitCommand } from '../tunnel/git-command.js';
import { finishChannel } from './channel-io.js';
import { type ParsedCommand, parseCommand } from './command.js';
import { formatError } from './console.js';

/**
 * One SSH session channel, with gitlab-sshd's contract: only the `GIT_PROTOCOL` env request is
 * accepted, pty requests are refused, `shell` (or `exec` without a command) prints the welcome
 * message, `exec` runs one git command. Errors reach the user boxed on stderr as `ERROR: …`;
 * exit status 0 success, 1 command failed, 128 unknown or unparsable command. Every session ends
 * with one `session finished` line and one count of `ssh_sessions_total` by its `Outcome`
 * (`lib/outcome.ts`: a refused or unknown command is `policy`, a client that left `client-gone`).
 */
export type SessionDeps = GitCommandDeps;

export interface SessionOwner {
  keyId: string;
  remoteIp: string;
  log: Logger;
  /** The connection's socket, for write coalescing of tunnel output. */
  transport?: GitCommandContext['transport'];
  /** Registers a running command so that the connection and shutdown can cancel it. */
  track(session: RunningSession): () => void;
}

export interface RunningSession {
  readonly done: Promise<void>;
  cancel(reason: string): void;
}

export function handleSession(session: Session, owner: SessionOwner, deps: SessionDeps): void {
  let gitProtocol: string | undefined;
  session.on('env', (accept, reject, info) => {
    if (info.key === 'GIT_PROTOCOL') {
      gitProtocol = info.val;
      accept?.();
    } else reject?.();
  });
  session.on('pty', (_accept, reject) => reject?.());
  session.on('shell', (accept) => {
    run(accept(), '', gitProtocol, owner, deps);
  });
  session.on('exec', (accept, _reject, info) => {
    run(accept(), info.command, gitProtocol, owner, deps);
  });
}

function run(
  channel: ServerChannel,
  line: string,
  gitProtocol: string | undefined,
  owner: SessionOwner,
  deps: SessionDeps,
): void {
  const requestId = randomUUID();
  const abort = new AbortController();
  const log = owner.log.child({ request_id: requestId, command: line });
  const started = Date.now();
  channel.on('error', (err: Error) => log.debug({ err }, 'channel error'));
  channel.stderr.on('error', (err: Error) => log.debug({ err }, 'channel stderr error'));
  const onClose = () => abort.abort(new Error('channel closed'));
  channel.once('close', onClose);

  const execute = async (): Promise<Finished> => {
    const parsed = parseCommand(line);
    if (!parsed.ok) {
      log.info({ exit_status: parsed.exitCode }, parsed.message);
      channel.stderr.write(formatError(parsed.message));
      return { exitStatus: parsed.exitCode, outcome: 'policy' };
    }
    const exitStatus = await execCommand(parsed.command, channel, {
      owner,
      deps,
      gitProtocol,
      requestId,
      log,
      signal: abort.signal,
    });
    return { exitStatus, outcome: abort.signal.aborted ? 'client-gone' : 'ok' };
  };

  const done = execute()
    .catch((err: unknown) => failed(err, abort.signal, channel, log))
    .then(async ({ exitStatus, outcome }) => {
      channel.off('close', onClose);
      if (exitStatus >= 0 && !abort.signal.aborted) await finishChannel(channel, exitStatus);
      else channel.close();
      deps.metrics.sshSessions[outcome]++;
      log.info({ exit_status: exitStatus, outcome, duration_ms: Date.now() - started }, 'session finished');
    });
  const untrack = owner.track({
    done,
    cancel: (reason) => abort.abort(new Error(reason)),
  });
  done.finally(untrack);
}

/** How a session ended: the SSH exit status (-1: none, the channel is closed) and its outcome. */
interface Finished {
  exitStatus: number;
  outcome: Outcome;
}

/** A command that threw: logged by outcome, shown to the user as `ERROR: …` unless they left. */
function failed(err: unknown, signal: AbortSignal, channel: ServerChannel, log: Logger): Finished {
  if (signal.aborted) {
    log.info({ reason: String(signal.reason) }, 'session cancelled');
    return { exitStatus: -1, outcome: 'client-gone' };
  }
  const outcome = failureOutcome(err);
  if (outcome === 'system') log.error({ err }, 'command failed');
  else if (isAppError(err)) log.info({ err: { code: err.code, message: err.message } }, 'command refused');
  channel.stderr.write(formatError(isAppError(err) ? err.message : 'Internal error'));
  return { exitStatus: 1, outcome };
}

interface ExecContext {
  owner: SessionOwner;
  deps: SessionDeps;
  gitProtocol: string | undefined;
  requestId: string;
  log: Logger;
  signal: AbortSignal;
}

async function execCommand(
  command: ParsedCommand,
  channel: ServerChannel,
  ctx: ExecContext,
): Promise<number> {
  if (command.kind === 'discover') return welcome(channel, ctx);
  ctx.deps.metrics.sshGitCommands++;
  return runGitCommand(
    ctx.deps,
    {
      channel,
      keyId: ctx.owner.keyId,
      remoteIp: ctx.owner.remoteIp,
      requestId: ctx.requestId,
      gitProtocol: ctx.gitProtocol,
      log: ctx.log,
      signal: ctx.signal,
      transport: ctx.owner.transport,
    },
    command.service,
    command.repo,
  );
}

/** `Welcome to GitLab, @<username>!` from `/api/v4/internal/discover`, as GitLab Shell prints it. */
async function welcome(channel: ServerChannel, ctx: ExecContext): Promise<number> {
  let username: string | null;
  try {
    ({ username } = await ctx.deps.api.discover(ctx.owner.keyId, {
      requestId: ctx.requestId,
      remoteIp: ctx.owner.remoteIp,
      signal: ctx.signal,
      log: ctx.log,
    }));
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw RouterError.discover(`Failed to get username: ${isAppError(err) ? err.message : String(err)}`, err);
  }
  channel.write(username ? `Welcome to GitLab, @${username}!\n` : 'Welcome to GitLab, Anonymous!\n');
  return 0;
}
