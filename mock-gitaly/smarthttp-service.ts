import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import type {
  InfoRefsRequest,
  InfoRefsResponse,
  PostReceivePackRequest,
  PostReceivePackResponse,
} from '../lib/proto-smarthttp.js';
import { authorize } from './auth.js';
import { ClientCanceled, GitFailed, InvalidArgument, logRpcFailure, toServiceError } from './errors.js';
import { GitRun, type GitRunResult } from './git-run.js';
import { readFirstRequest } from './git-stream.js';
import { resolveRepository } from './repository.js';
import type { SidechannelSession } from './sidechannel-open.js';
import {
  infoRefsCommand,
  postReceivePackCommand,
  type SmartHttpService,
  serviceHeader,
} from './smarthttp-command.js';
import { postUploadPackWithSidechannel } from './smarthttp-upload-pack.js';
import type { ServiceContext } from './ssh-service.js';

/**
 * Gitaly's `SmartHTTPService` for grpc-js: info/refs (server streaming), upload-pack over a
 * sidechannel (`smarthttp-upload-pack.ts`) and receive-pack (bidi, hooks told `protocol: "http"`).
 */

type InfoRefsCall = grpc.ServerWritableStream<InfoRefsRequest, InfoRefsResponse>;
type ReceivePackCall = grpc.ServerDuplexStream<PostReceivePackRequest, PostReceivePackResponse>;

/** Gitaly's streamio chunk size for `data` messages. */
const MAX_DATA_CHUNK = 128 * 1024;

function rpcLogger(ctx: ServiceContext, rpc: string, metadata: grpc.Metadata): Logger {
  return ctx.logger.child({ rpc, correlation_id: metadata.get('x-gitlab-correlation-id')[0] });
}

/** git's stdout → `data` messages (stderr is kept for the error text only, as Gitaly logs it). */
function dataOutput(call: {
  write(msg: { data: Buffer }): boolean;
  once(e: 'drain', f: () => void): unknown;
}) {
  return {
    write(band: 'stdout' | 'stderr', chunk: Buffer): boolean {
      if (band === 'stderr') return true;
      let ok = true;
      for (let at = 0; at < chunk.length; at += MAX_DATA_CHUNK) {
        if (!call.write({ data: chunk.subarray(at, at + MAX_DATA_CHUNK) })) ok = false;
      }
      return ok;
    },
    onceDrain: (resume: () => void) => void call.once('drain', resume),
  };
}

function runFailure(rpc: string, run: GitRunResult, cancelled: boolean) {
  if (run.outcome === 'ok') return undefined;
  if (cancelled || run.outcome === 'cancelled') return ClientCanceled('context canceled');
  const exit = run.exitCode !== null ? `exit status ${run.exitCode}` : `signal: ${run.signal ?? 'unknown'}`;
  return GitFailed(`${rpc}: cmd wait: ${exit}, stderr: ${JSON.stringify(run.stderr)}`);
}

async function serveInfoRefs(ctx: ServiceContext, service: SmartHttpService, call: InfoRefsCall) {
  const rpc = service === 'upload-pack' ? 'InfoRefsUploadPack' : 'InfoRefsReceivePack';
  const logger = rpcLogger(ctx, rpc, call.metadata);
  const started = Date.now();
  try {
    authorize(call.metadata, ctx.config.token);
    const repoPath = resolveRepository(ctx.config.storages, call.request.repository);
    const command = infoRefsCommand(repoPath, service, call.request, logger);
    call.write({ data: serviceHeader(service) });
    const git = new GitRun({ command, logger, processes: ctx.processes, output: dataOutput(call) });
    git.endStdin();
    const onCancelled = () => git.cancel();
    call.once('cancelled', onCancelled);
    const run = await git.done;
    call.off('cancelled', onCancelled);
    const err = runFailure(`running ${service} advertisement`, run, call.cancelled);
    if (err) throw err;
    logger.info({ duration_ms: Date.now() - started, stdout_bytes: run.stdoutBytes }, 'rpc finished');
    call.end();
  } catch (err) {
    call.emit('error', toServiceError(logRpcFailure(logger, err, started)));
  }
}

function receivePackCommandFor(ctx: ServiceContext, first: PostReceivePackRequest, logger: Logger) {
  if (!first.gl_id) throw InvalidArgument('empty GlId');
  if (first.data !== undefined && first.data.length > 0) throw InvalidArgument('non-empty Data');
  const repoPath = resolveRepository(ctx.config.storages, first.repository);
  if (ctx.hooksDir === undefined) throw new Error('hooks are not installed; the server has not started');
  const payload = {
    gl_id: first.gl_id,
    gl_username: first.gl_username ?? '',
    gl_repository: first.repository?.gl_repository || first.gl_repository || '',
    gl_project_path: first.repository?.gl_project_path ?? '',
    protocol: 'http' as const,
    repo_path: repoPath,
    gitlab_url: ctx.config.gitlabUrl,
    gitlab_secret_file: ctx.config.gitlabSecretFile,
  };
  return {
    repoPath,
    command: postReceivePackCommand(repoPath, first, { dir: ctx.hooksDir, payload }, logger),
  };
}

async function serveReceivePack(ctx: ServiceContext, call: ReceivePackCall) {
  const logger = rpcLogger(ctx, 'PostReceivePack', call.metadata);
  const started = Date.now();
  try {
    authorize(call.metadata, ctx.config.token);
    const first = await readFirstRequest(call as never);
    if (first === undefined || call.cancelled) return;
    const { repoPath, command } = receivePackCommandFor(ctx, first as PostReceivePackRequest, logger);
    const git = new GitRun({ command, logger, processes: ctx.processes, output: dataOutput(call) });
    const onData = (req: PostReceivePackRequest) => {
      if (req.data && !git.writeStdin(req.data)) {
        call.pause();
        git.onceStdinDrain(() => call.resume());
      }
    };
    const onCancelled = () => git.cancel();
    call.on('data', onData);
    call.once('end', () => git.endStdin());
    call.once('cancelled', onCancelled);
    call.resume();
    const run = await git.done;
    call.off('data', onData);
    call.off('cancelled', onCancelled);
    call.resume();
    if (run.outcome !== 'ok') void ctx.quarantine?.sweepSoon(repoPath);
    const err = runFailure('running receive-pack', run, call.cancelled);
    if (err) throw err;
    logger.info({ duration_ms: Date.now() - started, stdin_bytes: run.stdinBytes }, 'rpc finished');
    call.end();
  } catch (err) {
    call.emit('error', toServiceError(logRpcFailure(logger, err, started)));
  }
}

/** The `gitaly.SmartHTTPService` implementation for one connection (`session`: its yamux session). */
export function smartHttpServiceImplementation(
  ctx: ServiceContext,
  session?: SidechannelSession,
): grpc.UntypedServiceImplementation {
  return {
    InfoRefsUploadPack: (call: InfoRefsCall) => void serveInfoRefs(ctx, 'upload-pack', call),
    InfoRefsReceivePack: (call: InfoRefsCall) => void serveInfoRefs(ctx, 'receive-pack', call),
    PostUploadPackWithSidechannel: postUploadPackWithSidechannel(ctx, session),
    PostReceivePack: (call: ReceivePackCall) => void serveReceivePack(ctx, call),
  };
}
