import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TopologyModel } from '../topology.js';
import type { TopologyProject } from '../topology-types.js';
import type { MaintenanceRefusal, MaintenanceStore } from './maintenance.js';

/**
 * Where organization maintenance is enforced (gitlab!251067): git (`/allowed` for the org's
 * projects, the Workhorse pre-authorization of `ssh-*`, any git HTTP path `/<project>.git/…`), LFS
 * (`/lfs_authenticate`, `/<project>.git/info/lfs/…`) and the API (`/api/v4/projects/:id…`). The
 * message reaches the git user: gitlab-shell prints `/allowed`'s `message`, git prints a git HTTP
 * answer's text.
 */

type Shape = 'allowed' | 'json' | 'text';

interface Target {
  project: TopologyProject;
  shape: Shape;
}

function projectFromField(model: TopologyModel, body: Record<string, unknown>): TopologyProject | undefined {
  const glRepository = body.gl_repository;
  if (typeof glRepository === 'string') {
    const id = /^project-(\d+)$/.exec(glRepository)?.[1];
    return id === undefined ? undefined : model.projectById(Number(id));
  }
  const project = body.project;
  if (typeof project !== 'string') return undefined;
  return model.projectByPath(project.replace(/^\/+/, '').replace(/\.git$/, ''));
}

function projectOfApiId(model: TopologyModel, raw: string): TopologyProject | undefined {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return /^\d+$/.test(id) ? model.projectById(Number(id)) : model.projectByPath(id);
}

/** The project a request acts on, for the maintenance check, and how its refusal is shaped. */
export function maintenanceTarget(model: TopologyModel, path: string, body: unknown): Target | undefined {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (path === '/api/v4/internal/allowed') {
    const project = projectFromField(model, fields);
    return project && { project, shape: 'allowed' };
  }
  if (path === '/api/v4/internal/lfs_authenticate') {
    const project = projectFromField(model, fields);
    return project && { project, shape: 'json' };
  }
  const api = /^\/api\/v4\/projects\/([^/]+)/.exec(path);
  if (api?.[1] !== undefined) {
    const project = projectOfApiId(model, api[1]);
    return project && { project, shape: 'json' };
  }
  const git = /^\/(.+?)\.git(?:\/|$)/.exec(path);
  if (git?.[1] !== undefined) {
    const project = model.projectByPath(git[1]);
    return project && { project, shape: path.includes('/info/lfs/') ? 'json' : 'text' };
  }
  return undefined;
}

function send(reply: FastifyReply, shape: Shape, r: MaintenanceRefusal) {
  if (r.retryAfter !== undefined) reply.header('retry-after', String(r.retryAfter));
  reply.code(r.status);
  if (shape === 'allowed') return reply.send({ status: false, message: r.message });
  if (shape === 'json') return reply.send({ message: r.message });
  return reply.type('text/plain; charset=utf-8').send(r.message);
}

/** A preHandler: answers the maintenance refusal for a request to an organization in maintenance. */
export function maintenanceGuard(model: TopologyModel, store: MaintenanceStore) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0] ?? req.url;
    const target = maintenanceTarget(model, path, req.body);
    if (!target) return;
    const org = model.organizationOf(model.namespaceOf(target.project));
    const refusal = store.refusal(org.path);
    if (!refusal) return;
    req.log.info({ organization: org.path, status: refusal.status }, 'organization in maintenance');
    return send(reply, target.shape, refusal);
  };
}
