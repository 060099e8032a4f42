import type { FastifyReply, FastifyRequest } from 'fastify';
import { matchRoute } from '../routing/table.js';
import type { TopologyModel } from '../topology.js';
import type { TopologyOrganization, TopologyProject } from '../topology-types.js';
import { esc } from '../web/html.js';
import type { MaintenanceRefusal, MaintenanceStore } from './maintenance.js';

/**
 * Where organization maintenance is enforced (gitlab!251067): git (`/allowed` for the org's
 * projects, the Workhorse pre-authorization of `ssh-*`, any git HTTP path `/<project>.git/…`), LFS
 * (`/lfs_authenticate`, `/<project>.git/info/lfs/…`), the API (`/api/v4/projects/:id…`) and, as
 * GitLab's `EnforcesOrganizationMaintenanceMode` blocks every request of the organization, its web
 * pages (namespace, project and organization routes: an error page, or `{message}` for `.json`). The
 * message reaches the git user: gitlab-shell prints `/allowed`'s `message`, git prints a git HTTP
 * answer's text.
 */

type Shape = 'allowed' | 'json' | 'text' | 'page';

interface Target {
  org: TopologyOrganization;
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

const orgOfProject = (model: TopologyModel, p: TopologyProject | undefined) =>
  p && model.organizationOf(model.namespaceOf(p));

/** The organization a page or API route names (`routing/table.ts` owners), if any. */
function orgOfRoute(model: TopologyModel, method: string, path: string): TopologyOrganization | undefined {
  const m = matchRoute(method, path, { anyVerb: true });
  const owner = m?.route.owner;
  const value = owner && 'param' in owner ? m?.params[owner.param] : undefined;
  if (!owner || typeof value !== 'string') return undefined;
  if (owner.by === 'organization') return model.organization(value);
  if (owner.by === 'project') return orgOfProject(model, projectOfApiId(model, value));
  const ns = model.namespace(value.split('/')[0] ?? '');
  return ns && model.organizationOf(ns);
}

const wantsJson = (req: FastifyRequest, path: string) =>
  path.endsWith('.json') || req.headers['x-requested-with'] === 'XMLHttpRequest';

/** The organization a request acts on, for the maintenance check, and how its refusal is shaped. */
export function maintenanceTarget(model: TopologyModel, req: FastifyRequest): Target | undefined {
  const path = req.url.split('?')[0] ?? req.url;
  const body = req.body;
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const found = (org: TopologyOrganization | undefined, shape: Shape) => (org ? { org, shape } : undefined);
  if (path === '/api/v4/internal/allowed')
    return found(orgOfProject(model, projectFromField(model, fields)), 'allowed');
  if (path === '/api/v4/internal/lfs_authenticate')
    return found(orgOfProject(model, projectFromField(model, fields)), 'json');
  if (path.startsWith('/api/v4/internal/')) return undefined;
  const api = /^\/api\/v4\/projects\/([^/]+)/.exec(path);
  if (api?.[1] !== undefined) return found(orgOfProject(model, projectOfApiId(model, api[1])), 'json');
  const git = /^\/(.+?)\.git(?:\/|$)/.exec(path);
  if (git?.[1] !== undefined)
    return found(
      orgOfProject(model, model.projectByPath(git[1])),
      path.includes('/info/lfs/') ? 'json' : 'text',
    );
  const org = orgOfRoute(model, req.method, path);
  if (!org) return undefined;
  return found(org, path.startsWith('/api/') || wantsJson(req, path) ? 'json' : 'page');
}

function send(reply: FastifyReply, shape: Shape, r: MaintenanceRefusal) {
  if (r.retryAfter !== undefined) reply.header('retry-after', String(r.retryAfter));
  reply.code(r.status);
  if (shape === 'allowed') return reply.send({ status: false, message: r.message });
  if (shape === 'json') return reply.send({ message: r.message });
  if (shape === 'text') return reply.type('text/plain; charset=utf-8').send(r.message);
  const title = r.status === 503 ? '503: Service Unavailable' : '403: Forbidden';
  return reply
    .type('text/html; charset=utf-8')
    .send(
      `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${esc(r.message)}</p></body></html>\n`,
    );
}

/** A preHandler: answers the maintenance refusal for a request to an organization in maintenance. */
export function maintenanceGuard(model: TopologyModel, store: MaintenanceStore) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const target = maintenanceTarget(model, req);
    if (!target) return;
    const { org } = target;
    const refusal = store.refusal(org.path);
    if (!refusal) return;
    req.log.info({ organization: org.path, status: refusal.status }, 'organization in maintenance');
    return send(reply, target.shape, refusal);
  };
}
