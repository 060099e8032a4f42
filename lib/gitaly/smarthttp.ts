import type { Readable, Writable } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import type { ProtoRepository } from '../proto.js';
import { loadSmartHttpService, type PostReceivePackResponse } from '../proto-smarthttp.js';
import { encodeStdin, SIDECHANNEL_ID_METADATA, STDIN_FLUSH } from '../sidechannel.js';
import type { SidechannelRegistry } from './registry.js';
import type { UnaryMethod } from './sidechannel-call.js';

/**
 * Gitaly's `SmartHTTPService` as Workhorse calls it: info/refs as a server stream of `data`,
 * upload-pack on a sidechannel (the whole request body framed, a flush, then git's raw stdout),
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
}

export interface UploadPackCall {
  done: Promise<{ error: grpc.ServiceError | null; bytesOut: number }>;
  cancel(): void;
}

/** Copies `stream` → `output` with backpressure; resolves at the stream's end or close. */
function copyOut(stream: Readable, output: Writable, count: (n: number) => void): Promise<void> {
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      count(chunk.length);
      if (!output.write(chunk)) {
        stream.pause();
        output.once('drain', () => stream.resume());
      }
    });
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
  });
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

/** `PostUploadPackWithSidechannel`; the response is held (paused) until the body has ended. */
export function postUploadPack(
  target: SmartHttpTarget,
  request: SmartHttpRequest,
  metadata: grpc.Metadata,
  io: UploadPackIo,
): UploadPackCall {
  const waiter = target.registry.register();
  metadata.set(SIDECHANNEL_ID_METADATA, String(waiter.id));
  const m = method('PostUploadPackWithSidechannel');
  let bytesOut = 0;
  let copied: Promise<void> = Promise.resolve();
  const status = new Promise<grpc.ServiceError | null>((resolve) => {
    target.client.makeUnaryRequest(
      m.path,
      m.requestSerialize as (v: SmartHttpRequest) => Buffer,
      m.responseDeserialize,
      request,
      metadata,
      (err) => {
        waiter.close();
        resolve(err);
      },
    );
  });
  let sidechannel: Readable | undefined;
  void waiter.stream.then((stream) => {
    sidechannel = stream;
    stream.on('error', () => {});
    // Workhorse spools what Gitaly writes before the body ended; pausing keeps it in the yamux window.
    stream.pause();
    copyIn(io.body, stream, () => {
      io.onBodyEnd?.();
      copied = copyOut(stream, io.output, (n) => {
        bytesOut += n;
      });
      stream.resume();
    });
  });
  const done = status.then(async (error) => {
    if (!error) await copied;
    else sidechannel?.destroy();
    return { error, bytesOut };
  });
  return {
    done,
    cancel: () => {
      sidechannel?.destroy();
      waiter.close();
    },
  };
}

/** `PostReceivePack`: the first message (no data) is written; the caller writes `{ data }` chunks. */
export function postReceivePack(
  target: SmartHttpTarget,
  first: ReceivePackFirst,
  metadata: grpc.Metadata,
): grpc.ClientDuplexStream<{ data: Buffer } | ReceivePackFirst, PostReceivePackResponse> {
  const m = method('PostReceivePack');
  const call = target.client.makeBidiStreamRequest(
    m.path,
    m.requestSerialize as (v: unknown) => Buffer,
    m.responseDeserialize as (b: Buffer) => PostReceivePackResponse,
    metadata,
  );
  call.write(first);
  return call;
}
