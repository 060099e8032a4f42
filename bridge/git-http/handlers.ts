import { type Readable, Writable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { hasLimitError } from '../../lib/gitaly/limit-error.js';
import {
  DATA_CHUNK_BYTES,
  infoRefs,
  postReceivePack,
  postUploadPack,
  type SmartHttpRequest,
  type SmartHttpTarget,
} from '../../lib/gitaly/smarthttp.js';
import { headerValue } from '../../lib/http-headers.js';
import type { Exchange } from '../exchange.js';
import { callMetadata } from '../gitaly-client.js';
import { GITALY_UNAVAILABLE_MESSAGE } from '../gitaly-errors.js';
import { CORRELATION_HEADER, TEXT_PLAIN } from '../headers.js';
import type { RouteHandler, RouteRequest, Served } from '../routes.js';
import { type AuditDeps, sendGitAuditEvent } from './audit.js';
import { RECEIVE_PACK_BUSY, UPLOAD_PACK_BUSY } from './busy.js';
import { wantsGzip } from './content-encoding.js';
import { type Authorized, authorizeGitHttp, type GitHttpContext } from './preauthorize.js';

/**
 * Workhorse's three git routes (`internal/git`): `GET …/info/refs` → `InfoRefs*`, `POST
 * …/git-upload-pack` → `PostUploadPackWithSidechannel`, `POST …/git-receive-pack` →
 * `PostReceivePack`, each after `authorizeGitHttp`. Headers go out with the first byte of git's
 * answer, so a failure before it is still a status: info/refs `503`/`404`/`500` with Workhorse's
 * texts; the two POSTs Workhorse's busy answer for a LimitError, else an empty `500`.
 */

type Service = 'upload-pack' | 'receive-pack';

function target(a: Authorized): SmartHttpTarget {
  return { client: a.connection.client, registry: a.connection.registry };
}

function request(ex: Exchange, a: Authorized, configOptions: string[]): SmartHttpRequest {
  return {
    repository: a.auth.Repository,
    git_config_options: configOptions,
    git_protocol: headerValue(ex.headers, 'git-protocol') ?? '',
  };
}

function metadata(req: RouteRequest, a: Authorized): grpc.Metadata {
  const server = a.auth.GitalyServer;
  return callMetadata(server.token, req.correlationId, server.call_metadata);
}

/** `transfer.hideRefs=!refs` iff ShowAllRefs (info/refs and upload-pack; Rails' options are not used). */
const showAllRefs = (a: Authorized) => (a.auth.ShowAllRefs ? ['transfer.hideRefs=!refs'] : []);

/** The response as a Writable: headers with the first byte, backpressure from the client. */
class GitResponse extends Writable {
  bytes = 0;
  constructor(
    private readonly ex: Exchange,
    private readonly headers: Record<string, string | string[]>,
  ) {
    super({ highWaterMark: 64 * 1024 });
  }
  get started(): boolean {
    return this.ex.headersSent;
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error) => void): void {
    if (!this.ex.headersSent) this.ex.begin(200, this.headers);
    this.bytes += chunk.length;
    if (this.ex.write(chunk)) done();
    else this.ex.onDrain(() => done());
  }
  /** A failure: a status if nothing was written yet, else the response just ends (as Workhorse). */
  fail(code: number | undefined, req: RouteRequest): Served {
    const status = code === grpc.status.UNAVAILABLE ? 503 : code === grpc.status.NOT_FOUND ? 404 : 500;
    if (this.ex.headersSent) {
      this.ex.end();
      return { outcome: 'system', status: 200, fields: { grpc_code: code, bytes_out: this.bytes } };
    }
    const text =
      status === 503
        ? `${GITALY_UNAVAILABLE_MESSAGE}\n`
        : status === 404
          ? 'Not Found.\n'
          : 'Internal Server Error\n';
    this.ex.reject(status, { ...TEXT_PLAIN, [CORRELATION_HEADER]: req.correlationId }, text);
    return { outcome: status === 404 ? 'policy' : 'system', status, fields: { grpc_code: code } };
  }
  /** Gitaly's LimitError: Workhorse's busy bytes into the body (200 if nothing was written yet). */
  busy(bytes: Buffer, code: number | undefined): Promise<Served> {
    return new Promise((resolve) =>
      this.end(bytes, () => {
        this.ex.end();
        resolve({
          outcome: 'system',
          status: 200,
          fields: { grpc_code: code, reason: 'gitaly limit error' },
        });
      }),
    );
  }
  /**
   * upload-pack / receive-pack failing without a LimitError: Workhorse's `WriteHeader(500)` after
   * the RPC — an empty 500 (with the result headers already set) if nothing was written, else the
   * response just ends. A gzip body that does not decode fails as Workhorse's gzip reader does, before
   * any answer: `500` with its text.
   */
  failRpc(code: number | undefined, body?: Readable): Served {
    if (!this.ex.headersSent && body?.errored) {
      this.ex.reject(
        500,
        { ...TEXT_PLAIN, [CORRELATION_HEADER]: this.headers[CORRELATION_HEADER] ?? '' },
        'Internal Server Error\n',
      );
      return {
        outcome: 'policy',
        status: 500,
        fields: { grpc_code: code, reason: 'request body does not decode' },
      };
    }
    if (this.ex.headersSent) {
      this.ex.end();
      return { outcome: 'system', status: 200, fields: { grpc_code: code, bytes_out: this.bytes } };
    }
    this.ex.reject(500, this.headers, '');
    return {
      outcome: code === grpc.status.NOT_FOUND ? 'policy' : 'system',
      status: 500,
      fields: { grpc_code: code },
    };
  }
  finishOk(fields: Record<string, unknown>): Served {
    if (!this.ex.headersSent) this.ex.begin(200, this.headers);
    this.ex.end();
    return { outcome: 'ok', status: 200, fields: { bytes_out: this.bytes, ...fields } };
  }
}

function responseHeaders(kind: string, req: RouteRequest, a: Authorized): Record<string, string | string[]> {
  return {
    'content-type': `application/x-git-${kind}`,
    'cache-control': 'no-cache',
    [CORRELATION_HEADER]: req.correlationId,
    ...(a.wwwAuthenticate ? { 'www-authenticate': a.wwwAuthenticate } : {}),
  };
}

/** The request body, gunzipped for `Content-Encoding: gzip`; undefined for any other encoding. */
function requestBody(ex: Exchange): Readable | undefined {
  const encoding = (headerValue(ex.headers, 'content-encoding') ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return ex.body;
  if (encoding !== 'gzip') return undefined;
  const gunzip = createGunzip();
  ex.body.pipe(gunzip);
  return gunzip;
}

const auditDeps = (ctx: GitHttpContext, req: RouteRequest): AuditDeps => ({
  railsUrl: ctx.config.railsUrl,
  workhorseKey: ctx.workhorseKey,
  timeoutMs: ctx.config.preauthTimeoutMs,
  logger: req.log,
});

function unsupportedEncoding(ex: Exchange, req: RouteRequest): Served {
  ex.reject(500, { ...TEXT_PLAIN, [CORRELATION_HEADER]: req.correlationId }, 'Internal Server Error\n');
  const reason = `unsupported content encoding: ${headerValue(ex.headers, 'content-encoding')}`;
  return { outcome: 'policy', status: 500, fields: { reason } };
}

export function infoRefsHandler(ctx: GitHttpContext): RouteHandler {
  return async (ex, req) => {
    const a = await authorizeGitHttp(ex, req, ctx);
    if (!a.ok) return a.served;
    const given = new URL(ex.url, 'http://bridge').searchParams.get('service');
    if (given !== 'git-upload-pack' && given !== 'git-receive-pack') {
      ex.reject(404, { ...TEXT_PLAIN, [CORRELATION_HEADER]: req.correlationId }, 'Not Found\n');
      return { outcome: 'policy', status: 404, fields: { reason: 'dumb HTTP is not supported' } };
    }
    const service = given.slice(4) as Service;
    const gzip = wantsGzip(headerValue(ex.headers, 'accept-encoding'));
    const out = new GitResponse(ex, {
      ...responseHeaders(`${service}-advertisement`, req, a),
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    // Gitaly's bytes go through gzip when the client accepts it, as Workhorse's info/refs does.
    const sink: Writable = gzip ? createGzip() : out;
    if (sink !== out) sink.pipe(out);
    const call = infoRefs(target(a), service, request(ex, a, showAllRefs(a)), metadata(req, a));
    ex.onClientGone(() => call.cancel());
    return new Promise<Served>((resolve) => {
      call.pipe(
        new Writable({
          objectMode: true,
          write: (m: { data?: Buffer }, _e, done) => (m.data ? sink.write(m.data, () => done()) : done()),
          // The call ended and every message was written: end the answer (through gzip if any).
          final: (done) => {
            sink.end();
            done();
          },
        }),
      );
      call.once('error', (err: grpc.ServiceError) =>
        resolve(ex.clientGone ? { outcome: 'client-gone' } : out.fail(err.code, req)),
      );
      out.once('finish', () => resolve(out.finishOk({ gl_id: a.auth.GL_ID, gzip })));
    });
  };
}

export function uploadPackHandler(ctx: GitHttpContext): RouteHandler {
  return async (ex, req) => {
    const a = await authorizeGitHttp(ex, req, ctx);
    if (!a.ok) return a.served;
    const body = requestBody(ex);
    if (!body) return unsupportedEncoding(ex, req);
    const out = new GitResponse(ex, responseHeaders('upload-pack-result', req, a));
    const call = postUploadPack(target(a), request(ex, a, showAllRefs(a)), metadata(req, a), {
      body,
      output: out,
    });
    body.once('error', () => call.cancel());
    ex.onClientGone(() => call.cancel());
    // Workhorse's upload-pack body deadline: a client may not hold the call open with a slow body.
    const deadline = setTimeout(() => call.cancel(), ctx.config.uploadPackBodyTimeoutMs);
    body.once('end', () => clearTimeout(deadline));
    const { error, spooledBytes, stats } = await call.done;
    clearTimeout(deadline);
    if (ex.clientGone) return { outcome: 'client-gone', fields: { gl_id: a.auth.GL_ID } };
    if (error && hasLimitError(error.metadata)) return out.busy(UPLOAD_PACK_BUSY, error.code);
    if (error) return out.failRpc(error.code, body);
    await new Promise<void>((resolve) => out.end(() => resolve()));
    const served = out.finishOk({ gl_id: a.auth.GL_ID, spooled_bytes: spooledBytes });
    await sendGitAuditEvent(auditDeps(ctx, req), 'git-upload-pack', a.auth, req.correlationId, stats);
    return served;
  };
}

export function receivePackHandler(ctx: GitHttpContext): RouteHandler {
  return async (ex, req) => {
    const a = await authorizeGitHttp(ex, req, ctx);
    if (!a.ok) return a.served;
    const body = requestBody(ex);
    if (!body) return unsupportedEncoding(ex, req);
    const out = new GitResponse(ex, responseHeaders('receive-pack-result', req, a));
    const first = {
      ...request(ex, a, a.auth.GitConfigOptions),
      gl_id: a.auth.GL_ID,
      gl_username: a.auth.GL_USERNAME ?? '',
      gl_repository: a.auth.GL_REPOSITORY,
    };
    const call = postReceivePack(target(a), first, metadata(req, a), {
      buildId: a.auth.GlBuildID ?? '',
      scopedUserId: a.auth.GlScopedUserID ?? '',
    });
    ex.onClientGone(() => call.cancel());
    // Workhorse holds the answer until the request body has been read (coupled writer).
    call.pause();
    body.on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += DATA_CHUNK_BYTES) {
        if (!call.write({ data: chunk.subarray(at, at + DATA_CHUNK_BYTES) })) {
          body.pause();
          call.once('drain', () => body.resume());
        }
      }
    });
    body.once('end', () => {
      call.end();
      call.resume();
    });
    body.once('error', () => call.cancel());
    return new Promise<Served>((resolve) => {
      call.on('data', (m: { data?: Buffer }) => {
        if (m.data && !out.write(m.data)) {
          call.pause();
          out.once('drain', () => call.resume());
        }
      });
      call.once('error', (err: grpc.ServiceError) => {
        if (ex.clientGone) resolve({ outcome: 'client-gone' });
        else if (hasLimitError(err.metadata)) void out.busy(RECEIVE_PACK_BUSY, err.code).then(resolve);
        else resolve(out.failRpc(err.code, body));
      });
      call.once('end', () => out.end(() => resolve(out.finishOk({ gl_id: a.auth.GL_ID }))));
    }).then(async (served) => {
      if (served.outcome === 'ok')
        await sendGitAuditEvent(auditDeps(ctx, req), 'git-receive-pack', a.auth, req.correlationId);
      return served;
    });
  };
}
