/**
 * @file A gRPC call through the concurrency limiter (`concurrency.ts`), as Gitaly's limithandler
 * interceptor puts it: keyed by the RPC and the request's repository. A unary call has its request
 * at once; a streaming call's repository is in its first message, which is read here, then put back
 * (`unshift`) and the call paused, so the handler reads it as if untouched (`resumeAfterHandler`).
 */
import type * as grpc from '@grpc/grpc-js';
import type { Release } from './concurrency.js';
import { ClientCanceled, InvalidArgument } from './errors.js';
import type { GitalyWorld } from './world.js';

type AnyCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

/** `storage/relative path` of a request's repository ('' when it has none: the handler refuses it). */
export function repositoryKey(req: unknown): string {
  const repo = (req as { repository?: { storage_name?: unknown; relative_path?: unknown } | null } | null)
    ?.repository;
  if (!repo) return '';
  return `${String(repo.storage_name ?? '')}/${String(repo.relative_path ?? '')}`;
}

/** The first message of a streaming call, put back; undefined when the client ended or went first. */
function peekFirst(call: grpc.ServerDuplexStream<unknown, unknown>): Promise<unknown> {
  return new Promise((resolve) => {
    const settle = (msg: unknown) => {
      call.off('data', onData);
      call.off('end', onEnd);
      call.off('cancelled', onEnd);
      resolve(msg);
    };
    const onData = (msg: unknown) => {
      call.pause();
      call.unshift(msg);
      settle(msg);
    };
    const onEnd = () => settle(undefined);
    call.on('data', onData);
    call.once('end', onEnd);
    call.once('cancelled', onEnd);
  });
}

/**
 * Waits for the call's slot: resolves with its release (a no-op when the RPC has no limit), or
 * rejects with the limiter's `RESOURCE_EXHAUSTED`. A call cancelled while it waits leaves the queue.
 */
export async function limitCall(
  world: GitalyWorld,
  path: string,
  call: AnyCall,
  streaming: boolean,
): Promise<Release> {
  if (!world.limiter.isLimited(path)) return () => undefined;
  let req: unknown;
  if (streaming) {
    req = await peekFirst(call as grpc.ServerDuplexStream<unknown, unknown>);
    if (req === undefined && !call.cancelled) throw InvalidArgument('empty request');
  } else {
    req = (call as grpc.ServerUnaryCall<unknown, unknown>).request;
  }
  if (call.cancelled) throw ClientCanceled('the client cancelled the call before it was queued');
  return world.limiter.acquire(path, repositoryKey(req), (exit) => call.once('cancelled', exit.cancel));
}

/** After a limited streaming call's handler has attached its readers: lets the first message flow. */
export function resumeAfterHandler(call: AnyCall, streaming: boolean, limited: boolean): void {
  if (streaming && limited) (call as grpc.ServerDuplexStream<unknown, unknown>).resume();
}
