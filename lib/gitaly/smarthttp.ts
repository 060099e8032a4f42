import type { Readable, Writable } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import type { PackfileNegotiationStatistics__Output } from '../generated/gitaly/PackfileNegotiationStatistics.js';
import type { ProtoRepository } from '../proto.js';
import {
  loadSmartHttpService,
  type PostReceivePackResponse,
  type PostUploadPackWithSidechannelResponse,
} from '../proto-smarthttp.js';
import { encodeStdin, SIDECHANNEL_ID_METADATA, STDIN_FLUSH } from '../sidechannel.js';
import type { SidechannelRegistry } from './registry.js';
import type { UnaryMethod } from './sidechannel-call.js';
import { relayThrough, WriteAfterRead } from './write-after-read.js';

/**
 * Gitaly's `SmartHTTPService` as Workhorse calls it: info/refs as a server stream of `data`,
 * upload-pack on a sidechannel (the whole request body framed, a flush, then git's raw stdout,
 * held back until the body has ended),
 * receive-pack as a bidi stream whose first message has no data.
 */

export interface SmartHttpTarget {
  client: grpc.Client;
  registry: SidechannelRegistry;
}

export interface SmartHttpRequest {
  repository: ProtoRepository;
  git_config_options: string[];
  git_protocol: string;
}

export interface ReceivePackFirst extends SmartHttpRequest {
  gl_id: string;
  gl_username: string;
  gl_repository: string;
}

/** Gitaly's streamio chunk for `data` messages. */
export const DATA_CHUNK_BYTES = 128 * 1024;

function method(name: string): UnaryMethod {
  const def = loadSmartHttpService().service[name];
  if (!def) throw new Error(`gitaly.SmartHTTPService has no method ${name}`);
  return def as unknown as UnaryMethod;
}

/** `InfoRefsUploadPack` / `InfoRefsReceivePack`: a readable call emitting `{ data }` messages. */
export function infoRefs(
  target: SmartHttpTarget,
  service: 'upload-pack' | 'receive-pack',
  request: SmartHttpRequest,
  metadata: grpc.Metadata,
): grpc.ClientReadableStream<{ data?: Buffer }> {
  const m = method(service === 'upload-pack' ? 'InfoRefsUploadPack' : 'InfoRefsReceivePack');
  return target.client.makeServerStreamRequest(
    m.path,
    m.requestSerialize as (v: SmartHttpRequest) => Buffer,
    m.responseDeserialize as (b: Buffer) => { data?: Buffer },
    request,
    metadata,
  );
}

export interface UploadPackIo {
  /** The (decoded) request body; read whole into the sidechannel, then a flush. */
  body: Readable;
  /** Where git's stdout goes; writes honour backpressure. */
  output: Writable;
  /** Called once the request body has been read to its end (the response may start after it). */
  onBodyEnd?: () => void;
  /** Where an early answer is spooled beyond `SPOOL_MEMORY_BYTES` (default: the OS temp folder). */
  spoolDir?: string;
}

export interface UploadPackCall {
  done: Promise<{
    error: grpc.ServiceError | null;
    bytesOut: number;
    spooledBytes: number;
    /** Gitaly's count of the negotiation (v16.1+), for Workhorse's audit event; absent on error. */
    stats: PackfileNegotiationStatistics__Output | undefined;
  }>;
  cancel(): void;
}

/** Body → framed stdin + flush, with backpressure from the sidechannel. */
function copyIn(body: Readable, stream: Writable, onEnd: () => void): void {
  body.on('data', (chunk: Buffer) => {
    let ok = true;
    for (const part of encodeStdin(chunk)) ok = stream.write(part);
    if (!ok) {
      body.pause();
      stream.once('drain', () => body.resume());
    }
  });
  body.once('end', () => {
    stream.write(STDIN_FLUSH);
    onEnd();
  });
}

/**
 * `PostUploadPackWithSidechannel`; what Gitaly writes before the body has ended is spooled
 * (`WriteAfterRead`) and reaches `output` only after it.
 */
export function postUploadPack(
  target: SmartHttpTarget,
  request: SmartHttpRequest,
  metadata: grpc.Metadata,
  io: UploadPackIo,
): UploadPackCall {
  const waiter = target.registry.register();
  metadata.set(SIDECHANNEL_ID_METADATA, String(waiter.id));
  const m = method('PostUploadPackWithSidechannel');
  const abort = new AbortController();
  const coupled = new WriteAfterRead(io.output, abort.signal, io.spoolDir);
  let bytesOut = 0;
  let relayed: Promise<void> = Promise.resolve();
  let stats: PackfileNegotiationStatistics__Output | undefined;
  const status = new Promise<grpc.ServiceError | null>((resolve) => {
    target.client.makeUnaryRequest(
      m.path,
      m.requestSerialize as (v: SmartHttpRequest) => Buffer,
      m.responseDeserialize as (b: Buffer) => PostUploadPackWithSidechannelResponse,
      request,
      metadata,
      (err, response) => {
        waiter.close();
        stats = response?.packfile_negotiation_statistics ?? undefined;
        resolve(err);
      },
    );
  });
  let sidechannel: Readable | undefined;
  void waiter.stream.then((stream) => {
    sidechannel = stream;
    stream.on('error', () => {});
    relayed = relayThrough(stream, coupled, (n) => {
      bytesOut += n;
    });
    copyIn(io.body, stream, () => {
      io.onBodyEnd?.();
      void coupled.release();
    });
  });
  const done = status.then(async (error) => {
    if (error) {
      sidechannel?.destroy();
      await coupled.discard();
    } else {
      await relayed;
      await coupled.release();
    }
    return { error, bytesOut, spooledBytes: coupled.spooledBytes, stats: error ? undefined : stats };
  });
  return {
    done,
    cancel: () => {
      abort.abort();
      sidechannel?.destroy();
      waiter.close();
    },
  };
}

/** `PostReceivePack`: the first message (no data) is written; the caller writes `{ data }` chunks. */
/** The gRPC metadata key Workhorse propagates the client context in (Gitaly hands it to its hooks). */
export const CLIENT_CONTEXT_METADATA = 'gitaly-client-context-bin';

/** Who pushes beyond `gl_id`: the CI job and the linked scoped user, empty strings when absent. */
export interface ReceivePackClientContext {
  buildId: string;
  scopedUserId: string;
}

/**
 * `PostReceivePack` with Workhorse's client context: the JSON object `glBuildId` / `scoped-user-id`
 * (keys in this order, both always present) as binary metadata.
 */
export function postReceivePack(
  target: SmartHttpTarget,
  first: ReceivePackFirst,
  metadata: grpc.Metadata,
  context: ReceivePackClientContext,
): grpc.ClientDuplexStream<{ data: Buffer } | ReceivePackFirst, PostReceivePackResponse> {
  const m = method('PostReceivePack');
  const json = JSON.stringify({ glBuildId: context.buildId, 'scoped-user-id': context.scopedUserId });
  metadata.set(CLIENT_CONTEXT_METADATA, Buffer.from(json));
  const call = target.client.makeBidiStreamRequest(
    m.path,
    m.requestSerialize as (v: unknown) => Buffer,
    m.responseDeserialize as (b: Buffer) => PostReceivePackResponse,
    metadata,
  );
  call.write(first);
  return call;
}
