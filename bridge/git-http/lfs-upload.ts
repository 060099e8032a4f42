import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { signWorkhorseJwt } from '../../lib/jwt.js';
import { readBodyLimited } from '../../lib/streams.js';
import { BRIDGE_VERSION } from '../config.js';
import type { Exchange } from '../exchange.js';
import { CORRELATION_HEADER, passbackHeaders, preauthHeaders, TEXT_PLAIN } from '../headers.js';
import { preauthorizeRaw } from '../preauth.js';
import type { RouteHandler, RouteRequest, Served } from '../routes.js';
import type { GitHttpContext } from './preauthorize.js';

/**
 * Workhorse's `PUT /<project>.git/gitlab-lfs/objects/<oid>/<size>` (`requestBodyUploader`):
 * pre-authorize `PUT …/authorize` (no body) → Rails' `TempPath`; the body streamed to a file there
 * while its SHA-256 and size are counted (never held in memory); a mismatch → `400`; then the
 * finalize `PUT` to Rails with the stored file's `file.path`/`file.size`/`file.sha256`, whose
 * answer is relayed.
 */

const text = (req: RouteRequest) => ({ ...TEXT_PLAIN, [CORRELATION_HEADER]: req.correlationId });

async function headers(ctx: GitHttpContext, ex: Exchange, req: RouteRequest) {
  return preauthHeaders(ex.headers, {
    version: BRIDGE_VERSION,
    workhorseJwt: await signWorkhorseJwt(ctx.workhorseKey),
    correlationId: req.correlationId,
  });
}

/** Streams the body into `dir`; resolves with the file, its size and SHA-256. */
async function store(ex: Exchange, dir: string) {
  const path = join(dir, `bridge-lfs-${randomUUID()}`);
  const hash = createHash('sha256');
  let size = 0;
  ex.body.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
  });
  try {
    await pipeline(ex.body, createWriteStream(path, { mode: 0o600 }));
  } catch (err) {
    rmSync(path, { force: true });
    throw err;
  }
  return { path, size, sha256: hash.digest('hex') };
}

function finalize(ctx: GitHttpContext, url: string, head: http.OutgoingHttpHeaders, form: string) {
  const target = new URL(`${ctx.config.railsUrl}${url}`);
  const secure = target.protocol === 'https:';
  return new Promise<IncomingMessage>((resolve, reject) => {
    const r = (secure ? https : http).request(target, {
      method: 'PUT',
      agent: secure ? ctx.agents.https : ctx.agents.http,
      headers: {
        ...head,
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(Buffer.byteLength(form)),
      },
    });
    r.on('response', resolve);
    r.on('error', reject);
    r.end(form);
  });
}

export function lfsUploadHandler(ctx: GitHttpContext): RouteHandler {
  return async (ex, req) => {
    const q = ex.url.indexOf('?');
    const authorizeUrl =
      q === -1 ? `${ex.url}/authorize` : `${ex.url.slice(0, q)}/authorize${ex.url.slice(q)}`;
    const abort = new AbortController();
    ex.onClientGone(() => abort.abort());
    const pre = await preauthorizeRaw({
      railsUrl: ctx.config.railsUrl,
      url: authorizeUrl,
      method: 'PUT',
      headers: await headers(ctx, ex, req),
      timeoutMs: ctx.config.preauthTimeoutMs,
      signal: abort.signal,
      agents: ctx.agents,
    }).catch(() => undefined);
    if (ex.clientGone) return { outcome: 'client-gone' };
    if (!pre) {
      ex.reject(500, text(req), 'Internal Server Error\n');
      return { outcome: 'system', status: 500, fields: { reason: 'LFS authorize failed' } };
    }
    if (pre.kind === 'refused') {
      ex.reject(pre.status, { ...pre.headers, [CORRELATION_HEADER]: req.correlationId }, pre.body);
      return { outcome: 'policy', status: pre.status, fields: { reason: 'pre-authorization refused' } };
    }
    const tempPath = (pre.json as { TempPath?: unknown }).TempPath;
    if (typeof tempPath !== 'string' || tempPath === '') {
      ex.reject(500, text(req), 'Internal Server Error\n');
      return { outcome: 'system', status: 500, fields: { reason: 'no TempPath in the LFS authorization' } };
    }
    return storeAndFinalize(ex, req, ctx, tempPath);
  };
}

async function storeAndFinalize(
  ex: Exchange,
  req: RouteRequest,
  ctx: GitHttpContext,
  dir: string,
): Promise<Served> {
  const { oid = '', size = '' } = req.params;
  let file: Awaited<ReturnType<typeof store>>;
  try {
    file = await store(ex, dir);
  } catch {
    return ex.clientGone
      ? { outcome: 'client-gone' }
      : { outcome: 'system', fields: { reason: 'storing the body failed' } };
  }
  if (file.sha256 !== oid || String(file.size) !== size) {
    rmSync(file.path, { force: true });
    ex.send(400, text(req), 'Bad Request\n');
    return {
      outcome: 'policy',
      status: 400,
      fields: { reason: 'LFS object size or oid mismatch', bytes_in: file.size },
    };
  }
  const form = new URLSearchParams({
    'file.name': oid,
    'file.path': file.path,
    'file.size': String(file.size),
    'file.sha256': file.sha256,
  }).toString();
  try {
    const res = await finalize(ctx, ex.url, await headers(ctx, ex, req), form);
    const { body } = await readBodyLimited(res, 32 * 1024);
    const status = res.statusCode ?? 500;
    ex.send(status, { ...passbackHeaders(res.headers), [CORRELATION_HEADER]: req.correlationId }, body);
    return { outcome: status < 400 ? 'ok' : 'policy', status, fields: { bytes_in: file.size } };
  } catch (err) {
    rmSync(file.path, { force: true });
    ex.send(500, text(req), 'Internal Server Error\n');
    return {
      outcome: 'system',
      status: 500,
      fields: { reason: `LFS finalize failed: ${(err as Error).message}` },
    };
  }
}
