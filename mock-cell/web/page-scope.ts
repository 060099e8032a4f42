import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CellContext } from '../context.js';
import type { RouteMatch } from '../routing/table.js';
import type { TopologyOrganization, TopologyProject } from '../topology-types.js';
import { sessionVisitor, userOf } from './page-handler.js';
import { canView } from './project-view.js';
import { notFound, notMine, signInRedirect } from './respond.js';

/**
 * The subject of a scoped page, found or refused: a cell serves the pages of what it owns and
 * answers the "not mine" signal (421) for pages of another cell's namespace or organization.
 */

/** Why a scoped page is not rendered: unknown or invisible, another cell's, or sign in first. */
export type Refusal =
  | { outcome: 'not-found' }
  | { outcome: 'misdirected'; cell: string; message: string }
  | { outcome: 'sign-in' };

export function refuse(
  req: FastifyRequest,
  reply: FastifyReply,
  m: RouteMatch,
  ctx: CellContext,
  r: Refusal,
) {
  switch (r.outcome) {
    case 'not-found':
      return notFound(reply, ctx, m);
    case 'misdirected':
      return notMine(reply, r.cell, r.message);
    case 'sign-in':
      return signInRedirect(req, reply);
  }
}

/**
 * The project of a namespace-scoped page: 404 when unknown or not visible (a signed-out visitor is
 * asked to sign in instead), 421 when another cell owns the namespace.
 */
export function locateProject(
  req: FastifyRequest,
  m: RouteMatch,
  ctx: CellContext,
  projectPath: string,
): { outcome: 'ok'; project: TopologyProject } | Refusal {
  const namespacePath = m.params.namespace_id as string;
  const ns = ctx.model.namespace(namespacePath.split('/')[0] as string);
  if (!ns) return { outcome: 'not-found' };
  const owner = ctx.model.cellOfNamespace(ns).name;
  if (owner !== ctx.cell) {
    if (!ctx.model.seed000Routing()) return { outcome: 'not-found' };
    return {
      outcome: 'misdirected',
      cell: owner,
      message: `The namespace ${ns.path} is served by cell ${owner}.`,
    };
  }
  const project = namespacePath.includes('/')
    ? undefined
    : ctx.model.projectByPath(`${ns.path}/${projectPath}`);
  const v = sessionVisitor(req, ctx);
  if (project && canView(ctx, userOf(v), project)) return { outcome: 'ok', project };
  return project && v.kind === 'anonymous' ? { outcome: 'sign-in' } : { outcome: 'not-found' };
}

/** The organization of an organization-scoped page: 404 when unknown, 421 when another cell's. */
export function locateOrganization(
  m: RouteMatch,
  ctx: CellContext,
): { outcome: 'ok'; org: TopologyOrganization } | Refusal {
  const org = ctx.model.organization(m.params.organization_path as string);
  if (!org) return { outcome: 'not-found' };
  if (org.cell !== ctx.cell) {
    if (!ctx.model.seed000Routing()) return { outcome: 'not-found' };
    return {
      outcome: 'misdirected',
      cell: org.cell,
      message: `The organization ${org.path} is served by cell ${org.cell}.`,
    };
  }
  return { outcome: 'ok', org };
}
