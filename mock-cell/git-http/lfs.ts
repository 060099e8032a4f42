import type { FastifyReply, FastifyRequest } from 'fastify';
import { WORKHORSE_CONTENT_TYPE } from '../../lib/contracts/workhorse.js';
import { headerValue } from '../../lib/http-headers.js';
import { verifyWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import { AccessMessages, findProject } from '../access.js';
import type { CellContext } from '../context.js';
import type { RouteMatch } from '../routing/table.js';
import type { TopologyProject } from '../topology-types.js';
import type { PageHandler } from '../web/page-handler.js';
import { finalizeUpload, OID, openObject, storedSize, tempPath } from './lfs-store.js';
import { accessDenied, authenticate, decide, render } from './preauth.js';

/**
 * Rails' LFS endpoints (`Repositories::LfsApiController`, `LfsStorageController`): the batch API,
 * the object download, and the upload's `authorize` / finalize that Workhorse calls around the
 * body it stored. Authentication as git over HTTP (plus the `git-lfs-authenticate` token);
 * download needs `download_code`, upload `push_code`. Locks are not served: `501`.
 */

export const LFS_CONTENT_TYPE = 'application/vnd.git-lfs+json';

type Located = { ok: true; project: TopologyProject } | { ok: false; sent: unknown };

function lfsJson(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).header('content-type', LFS_CONTENT_TYPE).send(JSON.stringify(body));
}

/** Project, credentials and access for `command`, answered as Rails does when any fails. */
async function authorizeLfs(
  req: FastifyRequest,
  reply: FastifyReply,
  m: RouteMatch,
  ctx: CellContext,
  command: 'git-upload-pack' | 'git-receive-pack',
): Promise<Located> {
  const repoPath = `${m.params.namespace_id}/${m.params.repository_path}`;
  const project = findProject(ctx.model, { path: repoPath });
  if (project && ctx.model.cellOfProject(project).name !== ctx.cell) {
    const cell = ctx.model.cellOfProject(project).name;
    if (!ctx.model.seed000Routing())
      return {
        ok: false,
        sent: render(reply, { outcome: 'not-found', message: AccessMessages.projectNotFound }),
      };
    return {
      ok: false,
      sent: render(reply, {
        outcome: 'misdirected',
        cell,
        message: `The project is served by cell ${cell}.`,
      }),
    };
  }
  const cred = authenticate(req, ctx, project, command, true);
  if (!cred) return { ok: false, sent: accessDenied(reply, ctx) };
  const decision = project
    ? await decide(ctx, cred, command, project, repoPath)
    : ({ outcome: 'not-found', message: 'Not found' } as const);
  if (decision.outcome !== 'allowed') return { ok: false, sent: render(reply, decision) };
  return { ok: true, project: decision.project };
}

interface BatchObject {
  oid: string;
  size: number;
}

function batchObjects(body: unknown): BatchObject[] | undefined {
  const objects = (body as { objects?: unknown } | undefined)?.objects;
  if (!Array.isArray(objects)) return undefined;
  const out: BatchObject[] = [];
  for (const o of objects as Array<Record<string, unknown>>) {
    if (typeof o?.oid !== 'string' || !OID.test(o.oid) || typeof o.size !== 'number' || o.size < 0)
      return undefined;
    out.push({ oid: o.oid, size: o.size });
  }
  return out;
}

const batch: PageHandler = async (req, reply, m, ctx) => {
  const operation = (req.body as { operation?: unknown } | undefined)?.operation;
  const objects = batchObjects(req.body);
  if ((operation !== 'download' && operation !== 'upload') || !objects)
    return lfsJson(reply, 422, { message: 'Unprocessable Entity' });
  const located = await authorizeLfs(
    req,
    reply,
    m,
    ctx,
    operation === 'upload' ? 'git-receive-pack' : 'git-upload-pack',
  );
  if (!located.ok) return located.sent;
  const { project } = located;
  const base = `${ctx.model.externalUrl.replace(/\/+$/, '')}/${ctx.model.fullPath(project)}.git/gitlab-lfs/objects`;
  const authorization = headerValue(req.headers, 'authorization');
  const header = authorization ? { Authorization: authorization } : {};
  const answer = objects.map(({ oid, size }) => {
    const stored = storedSize(ctx.model, project, oid);
    if (operation === 'download') {
      if (stored === undefined)
        return {
          oid,
          size,
          error: {
            code: 404,
            message: "Object does not exist on the server or you don't have permissions to access it",
          },
        };
      return {
        oid,
        size: stored,
        authenticated: true,
        actions: { download: { href: `${base}/${oid}`, header, expires_in: 3600 } },
      };
    }
    if (stored === size) return { oid, size, authenticated: true };
    const upload = {
      href: `${base}/${oid}/${size}`,
      header: { ...header, 'Content-Type': 'application/octet-stream' },
      expires_in: 3600,
    };
    return { oid, size, authenticated: true, actions: { upload } };
  });
  return lfsJson(reply, 200, { objects: answer });
};

const download: PageHandler = async (req, reply, m, ctx) => {
  const oid = String(m.params.oid);
  const located = await authorizeLfs(req, reply, m, ctx, 'git-upload-pack');
  if (!located.ok) return located.sent;
  const size = OID.test(oid) ? storedSize(ctx.model, located.project, oid) : undefined;
  if (size === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
  return reply
    .code(200)
    .header('content-type', 'application/octet-stream')
    .header('content-length', String(size))
    .send(openObject(ctx.model, located.project, oid));
};

async function workhorseOnly(req: FastifyRequest, reply: FastifyReply, ctx: CellContext): Promise<boolean> {
  const jwt = await verifyWorkhorseJwt(ctx.workhorseKey, headerValue(req.headers, WORKHORSE_HEADER));
  if (!jwt.ok) reply.code(403).type('text/plain; charset=utf-8').send('Nil JSON web token');
  return jwt.ok;
}

const uploadAuthorize: PageHandler = async (req, reply, m, ctx) => {
  if (!(await workhorseOnly(req, reply, ctx))) return reply;
  const located = await authorizeLfs(req, reply, m, ctx, 'git-receive-pack');
  if (!located.ok) return located.sent;
  const oid = String(m.params.oid);
  const size = Number(m.params.size);
  if (!OID.test(oid) || !Number.isSafeInteger(size)) return reply.code(400).send({ message: 'Bad Request' });
  const body = { TempPath: tempPath(ctx.model, located.project), LfsOid: oid, LfsSize: size };
  return reply
    .code(200)
    .header('content-type', WORKHORSE_CONTENT_TYPE)
    .send(Buffer.from(JSON.stringify(body)));
};

const uploadFinalize: PageHandler = async (req, reply, m, ctx) => {
  if (!(await workhorseOnly(req, reply, ctx))) return reply;
  const located = await authorizeLfs(req, reply, m, ctx, 'git-receive-pack');
  if (!located.ok) return located.sent;
  const form = (req.body ?? {}) as Record<string, unknown>;
  const path = form['file.path'];
  const oid = String(m.params.oid);
  const size = Number(m.params.size);
  if (typeof path !== 'string' || !OID.test(oid)) return reply.code(400).send({ message: 'Bad Request' });
  const result = await finalizeUpload(ctx.model, located.project, { path, oid, size });
  if (result !== 'ok') return reply.code(422).send({ message: `Unprocessable Entity: ${result}` });
  return reply.code(200).type('text/plain; charset=utf-8').send('');
};

const locksVerify: PageHandler = (_req, reply) =>
  lfsJson(reply, 501, { message: 'LFS locks are not served by this mock cell' });

export const LFS_HANDLERS = {
  lfs_batch: batch,
  lfs_locks_verify: locksVerify,
  lfs_download: download,
  lfs_upload_authorize: uploadAuthorize,
  lfs_upload_finalize: uploadFinalize,
} satisfies Record<string, PageHandler>;
