import type { Readable, Writable } from 'node:stream';
import type { TunnelProfileName } from '../../lib/contracts/tunnel-profile.js';
import type { JwtKey } from '../../lib/jwt.js';
import type { Logger } from '../../lib/logger.js';
import { FLUSH_PKT } from '../../lib/pktline.js';
import { normalizeProjectPath } from '../../lib/repo-path.js';
import { actorFields, type ShellActor } from '../cells/actor.js';
import type { CellDirectory } from '../cells/directory.js';
import type { CallContext, InternalApi } from '../cells/internal-api.js';
import {
  CommandFailed,
  MisdirectedError,
  PROJECT_NOT_FOUND_MESSAGE,
  REMOTE_UNAVAILABLE_MESSAGE,
  RouterError,
} from '../errors.js';
import { forwardToPrimary, type PrimaryClients } from '../geo/forward.js';
import type { RouterMetrics } from '../metrics.js';
import type { Classifier } from '../routing/classifier.js';
import type { GitService } from '../ssh/command.js';
import { formatInfoMessages } from '../ssh/console.js';
import { passthrough, pumpInput } from './input.js';
import { type OpenTunnel, openTunnel, type TunnelEndpoint, type TunnelTarget } from './open.js';
import { type TunnelShape, tunnelShape } from './profiles.js';
import {
  AdvertisementFilter,
  type RelayTargets,
  relayResponse,
  type TunnelOutcome,
  TunnelProtocolError,
} from './response.js';

/**
 * One git command of an SSH session, GitLab Shell in Cells mode: classify the project, ask the
 * owning cell `/allowed`, then tunnel to its bridge, or, when `/allowed` answers a custom action
 * (a Geo secondary, `300`), forward to the primary it names (`geo/forward.ts`) — gitlab-shell's
 * order: Cells routing, then the custom action. A `421` from `/allowed` or from the first tunnel
 * request drops the cached route, learns again once and retries once.
 */
export interface GitCommandDeps {
  api: InternalApi;
  classifier: Classifier;
  cells: CellDirectory;
  jwtKey: JwtKey;
  metrics: RouterMetrics;
  /** HTTP clients of the Geo primaries custom actions name. */
  primaries: PrimaryClients;
  /** The gitlab-shell release whose request shapes the tunnel emits (default the newest). */
  tunnelProfile?: TunnelProfileName;
}

/** The session's plain streams: the client's stdin, and its stdout and stderr. */
export interface GitCommandIO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

export interface GitCommandContext {
  io: GitCommandIO;
  /** Who the session acts for: the key's id, or a certificate's GitLab username. */
  actor: ShellActor;
  remoteIp: string;
  requestId: string;
  /** `GIT_PROTOCOL` as the client sent it in an `env` request. */
  gitProtocol: string | undefined;
  log: Logger;
  /** Aborted when the client leaves or shutdown cancels the session. */
  signal: AbortSignal;
  /** The SSH connection's socket, for write coalescing (see RelayTargets.transport). */
  transport?: RelayTargets['transport'];
}

const ENDPOINTS: Record<GitService, TunnelEndpoint> = {
  'git-upload-pack': 'ssh-upload-pack',
  'git-receive-pack': 'ssh-receive-pack',
  'git-upload-archive': 'ssh-upload-archive',
};

/** Runs the command and resolves with the SSH exit status; user-facing failures throw AppErrors. */
export async function runGitCommand(
  deps: GitCommandDeps,
  ctx: GitCommandContext,
  service: GitService,
  repoArg: string,
): Promise<number> {
  const project = normalizeProjectPath(repoArg);
  if (!project) throw RouterError.projectNotFound(PROJECT_NOT_FOUND_MESSAGE);
  const routePath = `/${project}`;
  const callCtx: CallContext = {
    requestId: ctx.requestId,
    remoteIp: ctx.remoteIp,
    signal: ctx.signal,
    log: ctx.log,
  };
  let consolePrinted = false;
  for (let attempt = 1; ; attempt++) {
    const { cell, via } = await deps.classifier.classify(routePath, 'GET', callCtx);
    const log = ctx.log.child({ cell: cell.name, route: via, attempt });
    try {
      const access = await askAllowed(deps, ctx, cell, service, project, callCtx);
      if (!consolePrinted) {
        consolePrinted = true;
        writeStderr(ctx.io, formatInfoMessages(access.consoleMessages));
      }
      if (access.kind === 'custom-action') {
        deps.metrics.geoForwards++;
        return await forwardToPrimary(deps.primaries, ctx, service, access.custom);
      }
      log.info({ gl_project_path: access.glProjectPath, gl_id: access.glId }, 'access granted, tunnelling');
      const target: TunnelTarget = {
        cell,
        access,
        gitProtocol: ctx.gitProtocol,
        requestId: ctx.requestId,
        signal: ctx.signal,
      };
      const shape = tunnelShape(deps.tunnelProfile, deps.jwtKey, access.glId);
      const tunnel = new Tunnel(deps, ctx, target, shape, log);
      if (service === 'git-receive-pack' && shape.twoRequestPush) return await tunnel.receivePack();
      return await tunnel.streaming(ENDPOINTS[service], service === 'git-upload-pack');
    } catch (err) {
      if (!(err instanceof MisdirectedError)) throw err;
      deps.metrics.redirects++;
      deps.classifier.invalidate(routePath);
      log.info({ redirect: err.redirectCell }, 'cell does not own the project (421), learning again');
      if (attempt >= 2) throw RouterError.accessDenied(err.message, err);
    }
  }
}

/** gitlab-shell's `/allowed` call for an SSH git command (`changes: _any`, the client's address). */
function askAllowed(
  deps: GitCommandDeps,
  ctx: GitCommandContext,
  cell: TunnelTarget['cell'],
  service: GitService,
  project: string,
  callCtx: CallContext,
) {
  const request = {
    action: service,
    project: `${project}.git`,
    ...actorFields(ctx.actor),
    changes: '_any',
    protocol: 'ssh',
    check_ip: ctx.remoteIp,
  } as const;
  return deps.api.allowed(cell, request, callCtx);
}

function writeStderr(io: GitCommandIO, text: string): void {
  if (text !== '') io.stderr.write(text);
}

class Tunnel {
  constructor(
    private readonly deps: GitCommandDeps,
    private readonly ctx: GitCommandContext,
    private readonly target: TunnelTarget,
    private readonly shape: TunnelShape,
    private readonly log: Logger,
  ) {}

  private async open(endpoint: TunnelEndpoint, retryable: boolean): Promise<OpenTunnel> {
    const p = openTunnel(this.deps.cells, await this.shape.shellJwt(), this.target, endpoint);
    if (retryable) return p;
    // stdin was already consumed: a 421 now cannot be replayed elsewhere.
    return p.catch((err: unknown) => {
      throw err instanceof MisdirectedError ? RouterError.tunnelUnavailable(err.message, err) : err;
    });
  }

  /**
   * upload-pack / upload-archive (and receive-pack before gitlab-shell!1561): one request, stdin
   * streamed in (upload-pack's body closed after negotiation when the profile says so), response relayed.
   */
  async streaming(endpoint: TunnelEndpoint, uploadPack: boolean): Promise<number> {
    const t = await this.open(endpoint, true);
    const pump = pumpInput(
      this.ctx.io.stdin,
      t.call.body,
      uploadPack ? this.shape.uploadPackInput() : passthrough,
    );
    try {
      const outcome = await this.relay(t);
      return this.exitStatus(outcome);
    } finally {
      pump.stop();
      this.close(t, pump.bodyEnded);
    }
  }

  /**
   * receive-pack in two requests (gitlab-shell!1561): (1) body `0000` → relay the ref
   * advertisement through its flush; (2) once the client starts sending, stream its stdin and relay
   * the response without the repeated advertisement.
   */
  async receivePack(): Promise<number> {
    const adv = await this.open('ssh-receive-pack', true);
    adv.call.body.end(FLUSH_PKT);
    const keep = new AdvertisementFilter('advertisement');
    let first: TunnelOutcome;
    try {
      first = await this.relay(adv, keep);
    } finally {
      this.close(adv, true);
    }
    if (!keep.complete) {
      this.log.warn({ outcome: first }, 'receive-pack advertisement ended before its flush');
      if (first.framed && !first.error && first.exitStatus !== undefined && first.exitStatus !== 0) {
        return first.exitStatus;
      }
      throw this.broken(first, 'cells routing: receive-pack advertisement: advertisement ended before flush');
    }
    if (first.framed && (first.error || first.exitStatus !== 0)) return this.exitStatus(first);

    const input = await readAtLeast(this.ctx.io.stdin, FLUSH_PKT.length, this.ctx.signal);
    if (input.length === 0 || input.subarray(0, FLUSH_PKT.length).equals(FLUSH_PKT)) {
      this.log.info('client sent no commands, nothing to push');
      return 0;
    }
    const push = await this.open('ssh-receive-pack', false);
    const pump = pumpInput(this.ctx.io.stdin, push.call.body, passthrough, [input]);
    try {
      const outcome = await this.relay(push, new AdvertisementFilter('rest'));
      return this.exitStatus(outcome);
    } finally {
      pump.stop();
      this.close(push, pump.bodyEnded);
    }
  }

  private async relay(t: OpenTunnel, filter?: AdvertisementFilter): Promise<TunnelOutcome> {
    try {
      return await relayResponse(
        t.response.body,
        t.framed,
        { stdout: this.ctx.io.stdout, stderr: this.ctx.io.stderr, transport: this.ctx.transport },
        filter,
      );
    } catch (err) {
      t.call.cancel();
      if (this.ctx.signal.aborted) throw RouterError.cancelled('cancelled', err);
      if (err instanceof TunnelProtocolError)
        throw RouterError.tunnelProtocol(REMOTE_UNAVAILABLE_MESSAGE, err);
      throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
    }
  }

  /** The response is complete: end our half of the stream cleanly (or cancel it on failure). */
  private close(t: OpenTunnel, bodyEnded: boolean): void {
    t.release();
    if (this.ctx.signal.aborted) t.call.cancel();
    else if (!bodyEnded && !t.call.body.writableEnded) t.call.body.end();
  }

  /** The exit status of a complete response; a tunnel that failed throws for the session to render. */
  private exitStatus(outcome: TunnelOutcome): number {
    if (!outcome.framed) return 0;
    if (outcome.error) {
      const status = outcome.exitStatus !== undefined && outcome.exitStatus > 0 ? outcome.exitStatus : 1;
      const error = RouterError.tunnelUnavailable(outcome.error.message, outcome.error);
      throw new CommandFailed(error, status, outcome.wroteStderr);
    }
    if (outcome.exitStatus === undefined)
      throw this.broken(outcome, 'tunnel response ended without an exit status');
    return outcome.exitStatus >= 0 ? outcome.exitStatus : 1;
  }

  /** A response that broke off: "Remote repository is unavailable" unless the cell already said why. */
  private broken(outcome: TunnelOutcome, why: string): CommandFailed {
    const error = RouterError.tunnelProtocol(REMOTE_UNAVAILABLE_MESSAGE, new Error(why));
    return new CommandFailed(error, 1, outcome.wroteStderr);
  }
}

/**
 * Waits until the client sent at least `n` bytes (or ended stdin) and returns them, leaving the
 * channel paused for the next reader.
 */
function readAtLeast(source: Readable, n: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: Error) => {
      source.off('data', onData);
      source.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      source.pause();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= n) finish();
    };
    const onEnd = () => finish();
    const onAbort = () => finish(RouterError.cancelled('cancelled'));
    if (signal.aborted) return onAbort();
    if (source.readableEnded) return finish();
    source.on('data', onData);
    source.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    source.resume();
  });
}
