/**
 * @file The REST side, as the real service's grpc-gateway serves it to the HTTP Router:
 * `POST /v1/classify` (body `*`, proto3 JSON), errors as `google.rpc.Status` JSON with the HTTP
 * status grpc-gateway maps, an optional Cloudflare Access service-token check, and two probes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClassifyRequest__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import { headerValue } from '../lib/http-headers.js';
import { journalHeaders, REDACTED } from '../lib/journal-fields.js';
import { readBodyLimited } from '../lib/streams.js';
import { logCall } from './call-log.js';
import type { TopologyCore } from './core.js';
import {
  asTopologyError,
  InvalidArgument,
  MethodNotAllowed,
  NotServing,
  PermissionDenied,
  RouteNotFound,
  type TopologyError,
  Unauthenticated,
} from './errors.js';
import {
  classifyAnswerFields,
  classifyRequestFields,
  faultOf,
  grpcCodeName,
  journalCall,
} from './journal.js';
import { CLASSIFY_REQUEST, CLASSIFY_RESPONSE, readJson, writeJson } from './proto-json.js';

export const CLASSIFY_PATH = '/v1/classify';
/** Our probe paths: the real service's HealthService REST paths are not known. */
export const READINESS_PATH = '/readiness';
export const LIVENESS_PATH = '/liveness';
export const CF_ACCESS_ID_HEADER = 'cf-access-client-id';
export const CF_ACCESS_SECRET_HEADER = 'cf-access-client-secret';
/** Far above any classify body; grpc-gateway itself sets no limit. */
const BODY_LIMIT = 1024 * 1024;

/** What grpc-gateway forwards of the gRPC answer's header metadata (`Grpc-Metadata-<key>`). */
const GATEWAY_HEADERS = {
  'content-type': 'application/json',
  'grpc-metadata-content-type': 'application/grpc',
};

interface Answer {
  status: number;
  body: unknown;
  fields?: Record<string, unknown>;
  /** Fields of the journal entry (the answer of a classify). */
  journal?: Record<string, unknown>;
  fault?: Record<string, unknown> | undefined;
}

/** Request headers the journal keeps (the CF-Access secret redacted). */
const JOURNAL_HEADERS = [
  'content-type',
  'user-agent',
  'x-gitlab-correlation-id',
  CF_ACCESS_ID_HEADER,
  CF_ACCESS_SECRET_HEADER,
];

/** Writes the answer; returns its body's length in bytes. */
function send(res: ServerResponse, answer: Answer, gateway: boolean): number {
  const body = JSON.stringify(answer.body);
  const length = Buffer.byteLength(body);
  res.writeHead(answer.status, {
    ...(gateway ? GATEWAY_HEADERS : { 'content-type': 'application/json' }),
    'content-length': length,
  });
  res.end(body);
  return length;
}

/** `google.rpc.Status` as protojson writes it. */
function statusBody(err: TopologyError): { code: number; message: string; details: [] } {
  return { code: err.grpcCode, message: err.message, details: [] };
}

function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Cloudflare Access in front of the service: both headers, and the configured token. */
function checkCfAccess(req: IncomingMessage, cf: NonNullable<TopologyCore['config']['cfAccess']>): void {
  const id = headerValue(req.headers, CF_ACCESS_ID_HEADER);
  const secret = headerValue(req.headers, CF_ACCESS_SECRET_HEADER);
  if (id === undefined || secret === undefined) {
    throw Unauthenticated('missing CF-Access-Client-Id or CF-Access-Client-Secret');
  }
  if (!sameSecret(id, cf.clientId) || !sameSecret(secret, cf.clientSecret)) {
    throw PermissionDenied('service token is not allowed');
  }
}

async function readClassifyRequest(
  req: IncomingMessage,
  progress: Progress,
): Promise<ClassifyRequest__Output> {
  const { body, truncated } = await readBodyLimited(req, BODY_LIMIT);
  progress.bytesIn = body.length;
  if (truncated) throw InvalidArgument(`request body larger than ${BODY_LIMIT} bytes`);
  const text = body.toString('utf8');
  // grpc-gateway's generated handler accepts an empty body (io.EOF) as an empty message.
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw InvalidArgument(`proto: syntax error: ${(err as Error).message}`);
  }
  const parsed = readJson(CLASSIFY_REQUEST, json) as ClassifyRequest__Output;
  progress.request = parsed;
  return parsed;
}

/** Set once the request reaches the (virtual) gRPC call, whose answer carries grpc-gateway's headers. */
interface Progress {
  rpc: boolean;
  /** The request body's length, once read. */
  bytesIn: number;
  /** The parsed ClassifyRequest, once read. */
  request?: ClassifyRequest__Output;
}

async function classifyOverRest(
  core: TopologyCore,
  req: IncomingMessage,
  progress: Progress,
): Promise<Answer> {
  progress.rpc = true;
  const c = await core.classifyInWorld(await readClassifyRequest(req, progress));
  return {
    status: 200,
    body: writeJson(CLASSIFY_RESPONSE, c.response as Record<string, unknown>),
    fields: c.classified
      ? { by: c.classified.by, key: c.classified.key, cell_id: c.classified.cell.id }
      : { by: 'world', fault: c.fault },
    journal: classifyAnswerFields(c.response, core.cells),
    fault: c.fault,
  };
}

const ROUTES: Record<string, { method: string; probe: boolean }> = {
  [CLASSIFY_PATH]: { method: 'POST', probe: false },
  [READINESS_PATH]: { method: 'GET', probe: true },
  [LIVENESS_PATH]: { method: 'GET', probe: true },
};

async function route(
  core: TopologyCore,
  req: IncomingMessage,
  path: string,
  progress: Progress,
): Promise<Answer> {
  const known = ROUTES[path];
  if (!known?.probe && core.config.cfAccess) checkCfAccess(req, core.config.cfAccess);
  if (!known) throw RouteNotFound('Not Found');
  if (req.method !== known.method) throw MethodNotAllowed('Method Not Allowed');
  if (path === READINESS_PATH && !core.ready) throw NotServing('shutting down');
  if (known.probe) return { status: 200, body: {} };
  return classifyOverRest(core, req, progress);
}

/** The request listener of the REST server (node:http or node:https); every request is journaled. */
export function restHandler(core: TopologyCore): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    const startedAt = new Date();
    const path = (req.url ?? '/').split('?')[0] as string;
    const base = {
      transport: 'rest' as const,
      method: `${req.method} ${path}`,
      peer: req.socket.remoteAddress,
      ...(req.headers[CF_ACCESS_ID_HEADER] ? { cf_access_client_id: req.headers[CF_ACCESS_ID_HEADER] } : {}),
    };
    const progress: Progress = { rpc: false, bytesIn: 0 };
    const record = (
      status: number,
      bytesOut: number,
      extra: Record<string, unknown>,
      fault?: Record<string, unknown>,
    ) =>
      journalCall(core.journal, {
        started,
        startedAt,
        endpoint: path,
        method: req.method ?? 'GET',
        headers: journalRestHeaders(req),
        fields: { ...(progress.request ? classifyRequestFields(progress.request) : {}), ...extra },
        status,
        bytesIn: progress.bytesIn,
        bytesOut,
        fault,
      });
    route(core, req, path, progress).then(
      (answer) => {
        const bytesOut = send(res, answer, progress.rpc);
        const fields = { ...base, ...answer.fields, status: answer.status };
        logCall(core.logger, { ...fields, ms: Math.round(performance.now() - started) }, undefined);
        record(answer.status, bytesOut, answer.journal ?? {}, answer.fault);
      },
      (thrown: unknown) => {
        const err = asTopologyError(thrown);
        let bytesOut = 0;
        if (!res.headersSent && !res.destroyed)
          bytesOut = send(res, { status: err.statusCode, body: statusBody(err) }, progress.rpc);
        logCall(
          core.logger,
          { ...base, status: err.statusCode, ms: Math.round(performance.now() - started) },
          err,
        );
        record(
          err.statusCode,
          bytesOut,
          { code: grpcCodeName(err.grpcCode), message: err.message },
          faultOf(err),
        );
      },
    );
  };
}

function journalRestHeaders(req: IncomingMessage): Record<string, string> {
  const headers = journalHeaders(req.headers, JOURNAL_HEADERS);
  if (headers[CF_ACCESS_SECRET_HEADER] !== undefined) headers[CF_ACCESS_SECRET_HEADER] = REDACTED;
  return headers;
}
