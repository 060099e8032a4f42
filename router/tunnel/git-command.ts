import type { Readable, Writable } from 'node:stream';
import type { TunnelProfileName } from '../../lib/contracts/tunnel-profile.js';
import type { JwtKey } from '../../lib/jwt.js';
import type { Logger } from '../../lib/logger.js';
import { normalizeProjectPath } from '../../lib/repo-path.js';
import { actorFields, type ShellActor } from '../cells/actor.js';
import type { CellDirectory } from '../cells/directory.js';
import type { CallContext, InternalApi } from '../cells/internal-api.js';
import { MisdirectedError, PROJECT_NOT_FOUND_MESSAGE, RouterError } from '../errors.js';
import { forwardToPrimary, type PrimaryClients } from '../geo/forward.js';
import type { RouterMetrics } from '../metrics.js';
import type { Classifier } from '../routing/classifier.js';
import type { GitService } from '../ssh/command.js';
import { formatInfoMessages } from '../ssh/console.js';
import type { TunnelEndpoint, TunnelTarget } from './open.js';
import { tunnelShape } from './profiles.js';
import type { RelayTargets } from './response.js';
import { Tunnel } from './tunnel.js';

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
  /** How long each tunnel request's Shell JWT is valid (router setting `shellJwtTtlSeconds`; default 60 s). */
  shellJwtTtlSeconds?: number;
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
      const shape = tunnelShape(deps.tunnelProfile, deps.jwtKey, access.glId, deps.shellJwtTtlSeconds);
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
