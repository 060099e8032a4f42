/**
 * @file Every RPC of a mock Gitaly, whatever its service, as one journal entry, with the world's
 * faults applied first: `observedImplementation` wraps a grpc-js service implementation. The entry
 * has the full method, the repository and user fields of the (first) request, the metadata of
 * interest, the final status code name, the duration, stdin bytes in and stdout+stderr bytes out.
 */
import * as grpc from '@grpc/grpc-js';
import { CLIENT_CONTEXT_METADATA } from '../lib/gitaly/smarthttp.js';
import { journalHeaders } from '../lib/journal-fields.js';
import { authorizeEarly } from './auth.js';
import { limitCall, resumeAfterHandler } from './call-limit.js';
import { MAX_QUEUE_SIZE_MESSAGE, MAX_QUEUE_TIME_MESSAGE, type Release } from './concurrency.js';
import { asRpcError } from './errors.js';
import type { FaultAction, GitalyWorld } from './world.js';

/** Which connection the call came on: a yamux backchannel session or plain gRPC. */
export type GitalyTransport = 'backchannel' | 'plain';

interface CallRecord {
  started: number;
  startedAt: Date;
  endpoint: string;
  headers: Record<string, string>;
  fields: Record<string, unknown>;
  bytesIn: number;
  bytesOut: number;
  fault: Record<string, unknown> | undefined;
  done: boolean;
  /** Frees the call's concurrency slot (`concurrency.ts`). */
  release: Release;
}

type AnyCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

/** Bytes an RPC moved outside its messages (a sidechannel), noted by its handler before it answers. */
const sideBytes = new WeakMap<object, { bytesIn: number; bytesOut: number }>();

/** Notes what a call moved on its sidechannel, for its journal entry. */
export function noteCallBytes(call: object, bytesIn: number, bytesOut: number): void {
  sideBytes.set(call, { bytesIn, bytesOut });
}

const METADATA_KEYS = [
  'authorization',
  'gitaly-sidechannel-id',
  'x-gitlab-correlation-id',
  'user-agent',
  CLIENT_CONTEXT_METADATA,
];

function metadataHeaders(metadata: grpc.Metadata): Record<string, string> {
  const plain: Record<string, string> = {};
  // The client context is JSON in binary metadata: journaled as its text.
  for (const [k, v] of Object.entries(metadata.getMap()))
    plain[k] = !Buffer.isBuffer(v)
      ? v
      : k === CLIENT_CONTEXT_METADATA
        ? v.toString('utf8')
        : v.toString('base64');
  const features = Object.keys(plain).filter((k) => k.startsWith('gitaly-feature-'));
  return journalHeaders(plain, [...METADATA_KEYS, ...features]);
}

/** The routing-relevant fields of a request message: repository, user, protocol. */
export function requestFields(req: unknown): Record<string, unknown> {
  if (typeof req !== 'object' || req === null) return {};
  const r = req as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const repo = r.repository as Record<string, unknown> | undefined | null;
  if (repo) {
    out.repository = {
      storage_name: repo.storage_name ?? '',
      relative_path: repo.relative_path ?? '',
      gl_repository: repo.gl_repository ?? '',
      gl_project_path: repo.gl_project_path ?? '',
    };
  }
  for (const key of ['gl_id', 'gl_username', 'gl_repository', 'git_protocol']) {
    if (typeof r[key] === 'string' && r[key] !== '') out[key] = r[key];
  }
  return out;
}

function stdinLength(msg: unknown): number {
  const stdin = (msg as { stdin?: unknown } | null)?.stdin;
  return Buffer.isBuffer(stdin) ? stdin.length : 0;
}

function outputLength(msg: unknown): number {
  const m = msg as { stdout?: unknown; stderr?: unknown; data?: unknown } | null;
  let n = 0;
  for (const part of [m?.stdout, m?.stderr, m?.data]) if (Buffer.isBuffer(part)) n += part.length;
  return n;
}

function finish(world: GitalyWorld, rec: CallRecord, call: object, status: string): void {
  if (rec.done) return;
  rec.done = true;
  rec.release();
  const side = sideBytes.get(call);
  world.journal({
    time: rec.startedAt.toISOString(),
    cell: world.cell,
    service: 'gitaly',
    endpoint: rec.endpoint,
    headers: rec.headers,
    fields: rec.fields,
    status,
    durationMs: Math.round((performance.now() - rec.started) * 10) / 10,
    bytesIn: rec.bytesIn + (side?.bytesIn ?? 0),
    bytesOut: rec.bytesOut + (side?.bytesOut ?? 0),
    ...(rec.fault ? { fault: rec.fault } : {}),
  });
}

const codeName = (code: unknown) =>
  typeof code === 'number' ? (grpc.status[code] ?? String(code)) : 'UNKNOWN';

/** A streaming call: fields from its first message, bytes counted both ways, status from its end. */
function observeStream(world: GitalyWorld, rec: CallRecord, call: grpc.ServerDuplexStream<unknown, unknown>) {
  let first = true;
  call.on('data', (msg: unknown) => {
    if (first) Object.assign(rec.fields, requestFields(msg));
    first = false;
    rec.bytesIn += stdinLength(msg);
  });
  const write = call.write.bind(call) as (chunk: unknown, ...rest: unknown[]) => boolean;
  (call as unknown as { write: typeof write }).write = (chunk, ...rest) => {
    rec.bytesOut += outputLength(chunk);
    return write(chunk, ...rest);
  };
  let failed: string | undefined;
  call.on('error', (err: { code?: unknown }) => {
    failed ??= codeName(err.code);
  });
  call.once('finish', () => finish(world, rec, call, failed ?? 'OK'));
  call.once('cancelled', () => finish(world, rec, call, 'CANCELLED'));
}

function failCall(
  call: AnyCall,
  callback: grpc.sendUnaryData<unknown> | undefined,
  action: FaultAction & { kind: 'fail' },
) {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(action.trailers ?? {})) metadata.set(key, value);
  const err = { code: action.code, details: action.message, message: action.message, metadata };
  if (callback) callback(err);
  else call.emit('error', err);
}

/** Gitaly's `reason` label of `gitaly_requests_dropped_total` for a limiter refusal. */
function droppedReason(message: string): string {
  if (message === MAX_QUEUE_SIZE_MESSAGE) return 'max_size';
  return message === MAX_QUEUE_TIME_MESSAGE ? 'max_time' : 'other';
}

/** The journal record of a call as it starts (a unary call's request fields already known). */
function callRecord(
  endpoint: string,
  call: AnyCall,
  streaming: boolean,
  base: Record<string, unknown>,
  fault: CallRecord['fault'],
): CallRecord {
  return {
    started: performance.now(),
    startedAt: new Date(),
    endpoint,
    headers: metadataHeaders(call.metadata),
    fields: {
      ...base,
      ...(streaming ? {} : requestFields((call as grpc.ServerUnaryCall<unknown, unknown>).request)),
    },
    bytesIn: 0,
    bytesOut: 0,
    fault,
    done: false,
    release: () => undefined,
  };
}

function wrap(
  world: GitalyWorld,
  token: string,
  def: grpc.MethodDefinition<unknown, unknown>,
  name: string,
  handler: grpc.UntypedHandleCall,
  base: Record<string, unknown>,
): grpc.UntypedHandleCall {
  const streaming = def.requestStream || def.responseStream;
  const wrapped = (call: AnyCall, callback?: grpc.sendUnaryData<unknown>) => {
    const action = world.faults.take(name);
    const rec = callRecord(def.path, call, streaming, base, action?.fault);
    if (action?.kind === 'fail') {
      failCall(call, callback, action);
      return finish(world, rec, call, codeName(action.code));
    }
    const limited = world.limiter.isLimited(def.path);
    const run = () => {
      if (call.cancelled) return finish(world, rec, call, 'CANCELLED');
      if (streaming) {
        observeStream(world, rec, call as grpc.ServerDuplexStream<unknown, unknown>);
        (handler as (c: AnyCall) => void)(call);
        return resumeAfterHandler(call, streaming, limited);
      }
      call.once('cancelled', () => finish(world, rec, call, 'CANCELLED'));
      const done: grpc.sendUnaryData<unknown> = (err, value) => {
        finish(world, rec, call, err ? codeName(err.code ?? grpc.status.UNKNOWN) : 'OK');
        callback?.(err, value);
      };
      (handler as (c: AnyCall, cb: grpc.sendUnaryData<unknown>) => void)(call, done);
    };
    const admitted = (release: Release) => {
      rec.release = release;
      if (action?.kind === 'delay') setTimeout(run, action.ms);
      else run();
    };
    // Gitaly's auth interceptor runs before its limiter: a bad token is refused at once by the
    // handler, never queued.
    if (!limited || !authorizeEarly(call.metadata, token)) return admitted(rec.release);
    limitCall(world, def.path, call, streaming).then(admitted, (err: unknown) => {
      const e = asRpcError(err);
      if (call.cancelled) return finish(world, rec, call, 'CANCELLED');
      rec.fields.dropped = droppedReason(e.message);
      failCall(call, callback, { kind: 'fail', code: e.grpcCode, message: e.message, fault: {} });
      finish(world, rec, call, codeName(e.grpcCode));
    });
  };
  return wrapped as unknown as grpc.UntypedHandleCall;
}

/**
 * `impl` with every method journaled and subject to the world's faults. `transport` says which
 * kind of connection the server it goes on serves.
 */
export function observedImplementation(
  world: GitalyWorld,
  token: string,
  service: grpc.ServiceDefinition,
  impl: grpc.UntypedServiceImplementation,
  transport: GitalyTransport,
): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(impl)) {
    const def = service[name] as grpc.MethodDefinition<unknown, unknown> | undefined;
    if (!def) {
      out[name] = handler;
      continue;
    }
    const base = { rpc: name, transport, sidechannel: name.endsWith('WithSidechannel') };
    out[name] = wrap(world, token, def, name, handler, base);
  }
  return out;
}
