import { randomUUID } from 'node:crypto';
import type { ServerChannel, Session } from 'ssh2';
import { isAppError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { failureOutcome, isSliFailure, type Outcome } from '../../lib/outcome.js';
import type { ShellActor } from '../cells/actor.js';
import type { CommandContext, CommandDeps } from '../commands/context.js';
import { COMMANDS } from '../commands/index.js';
import { CommandFailed } from '../errors.js';
import { finishChannel, keepWindowResumes } from './channel-io.js';
import { parseCommand } from './command.js';
import { formatError } from './console.js';

/**
 * One SSH session channel, with gitlab-sshd's contract: only the `GIT_PROTOCOL` env request is
 * accepted, pty requests are refused, `shell` (or `exec` without a command) prints the welcome
 * message, `exec` runs one command of `router/commands/` with the channel as its plain streams.
 * Every failure a command throws is rendered here, once, boxed on stderr as `ERROR: …`;
 * exit status 0 success, 1 command failed, 128 unknown or unparsable command. Every session ends
 * with one `session finished` line and one count of `ssh_sessions_total` by its `Outcome`
 * (`lib/outcome.ts`: a refused or unknown command is `policy`, a client that left `client-gone`).
 */
export type SessionDeps = CommandDeps;

export interface SessionOwner {
  actor: ShellActor;
  remoteIp: string;
  log: Logger;
  /** The connection's socket, for write coalescing of tunnel output. */
  transport?: CommandContext['transport'];
  /** Registers a running command so that the connection and shutdown can cancel it. */
  track(session: RunningSession): () => void;
  /** A command ended: its outcome and the bytes it wrote to stdout (for the connection's totals). */
  ended(outcome: Outcome, writtenBytes: number): void;
}

export interface RunningSession {
  readonly done: Promise<void>;
  cancel(reason: string): void;
}

export function handleSession(session: Session, owner: SessionOwner, deps: SessionDeps): void {
  const opened = Date.now();
  let gitProtocol: string | undefined;
  session.on('env', (accept, reject, info) => {
    if (info.key === 'GIT_PROTOCOL') {
      gitProtocol = info.val;
      accept?.();
    } else reject?.();
  });
  session.on('pty', (_accept, reject) => reject?.());
  session.on('shell', (accept) => {
    run(accept(), '', gitProtocol, owner, deps, opened);
  });
  session.on('exec', (accept, _reject, info) => {
    run(accept(), info.command, gitProtocol, owner, deps, opened);
  });
}

/** One accepted channel's command: parsed, executed, its failure rendered, its end counted and logged. */
interface Run {
  channel: ServerChannel;
  line: string;
  gitProtocol: string | undefined;
  owner: SessionOwner;
  deps: SessionDeps;
  requestId: string;
  log: Logger;
  signal: AbortSignal;
}

function run(
  channel: ServerChannel,
  line: string,
  gitProtocol: string | undefined,
  owner: SessionOwner,
  deps: SessionDeps,
  opened: number,
): void {
  const requestId = randomUUID();
  const abort = new AbortController();
  const log = owner.log.child({ request_id: requestId, command: line });
  const started = Date.now();
  deps.metrics.sshHistograms.sessionEstablished.observe((started - opened) / 1000);
  const written = countWrites(channel);
  keepWindowResumes(channel);
  channel.on('error', (err: Error) => log.debug({ err }, 'channel error'));
  channel.stderr.on('error', (err: Error) => log.debug({ err }, 'channel stderr error'));
  const onClose = () => abort.abort(new Error('channel closed'));
  channel.once('close', onClose);

  const r: Run = { channel, line, gitProtocol, owner, deps, requestId, log, signal: abort.signal };
  const done = execute(r)
    .catch((err: unknown) => failed(err, abort.signal, channel, log))
    .then(async ({ exitStatus, outcome }) => {
      channel.off('close', onClose);
      if (exitStatus >= 0 && !abort.signal.aborted) await finishChannel(channel, exitStatus);
      else channel.close();
      const ended = Date.now();
      const m = deps.metrics;
      m.sshSessions[outcome]++;
      m.sliSshdSessions++;
      if (isSliFailure(outcome)) m.sliSshdSessionErrors++;
      m.sshHistograms.sessionDuration.observe((ended - opened) / 1000);
      owner.ended(outcome, written());
      log.info(
        { exit_status: exitStatus, outcome, duration_ms: ended - started, written_bytes: written() },
        'session finished',
      );
    });
  const untrack = owner.track({
    done,
    cancel: (reason) => abort.abort(new Error(reason)),
  });
  done.finally(untrack);
}

/** Parses the command line and runs the command with the channel as its plain streams. */
async function execute(r: Run): Promise<Finished> {
  const parsed = parseCommand(r.line);
  if (!parsed.ok) {
    r.log.info({ exit_status: parsed.exitCode }, parsed.message);
    r.channel.stderr.write(formatError(parsed.message));
    return { exitStatus: parsed.exitCode, outcome: 'policy' };
  }
  const exitStatus = await COMMANDS[parsed.command.name].execute({
    io: { stdin: r.channel, stdout: r.channel, stderr: r.channel.stderr },
    args: parsed.command.args,
    actor: r.owner.actor,
    remoteIp: r.owner.remoteIp,
    requestId: r.requestId,
    gitProtocol: r.gitProtocol,
    log: r.log,
    signal: r.signal,
    transport: r.owner.transport,
    deps: r.deps,
  });
  return { exitStatus, outcome: r.signal.aborted ? 'client-gone' : 'ok' };
}

/**
 * Counts what is written to the channel's stdout (gitlab-sshd's `CountingWriter`) by wrapping the
 * channel's own `write`, so every writer of stdout is counted without a stream in between.
 */
function countWrites(channel: ServerChannel): () => number {
  let n = 0;
  const write = channel.write.bind(channel) as (...args: unknown[]) => boolean;
  channel.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') n += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) n += chunk.byteLength;
    return write(chunk, ...rest);
  }) as ServerChannel['write'];
  return () => n;
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
  const shown = err instanceof CommandFailed && err.shown;
  if (!shown) channel.stderr.write(formatError(isAppError(err) ? err.message : 'Internal error'));
  return { exitStatus: err instanceof CommandFailed ? err.exitStatus : 1, outcome };
}
