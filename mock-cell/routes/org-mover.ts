import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CellContext } from '../context.js';
import { moveOrganization } from '../org-move.js';
import type { TopologyOrganization } from '../topology-types.js';
import { isMaintenanceReason, type TransitionEvent } from '../world/maintenance.js';

/**
 * GitLab's org-mover API (`lib/api/internal/org_mover.rb`), under /api/v4/internal (shell JWT):
 * `GET org_mover/maintenance_state` → `{state}`, `GET org_mover/maintenance_readiness` →
 * `{ready, blocking_reason}`, `POST org_mover/start_maintenance {maintenance_reason}`,
 * `confirm_maintenance`, `cancel_maintenance`, `exit_maintenance` → 204 (idempotent); an invalid
 * transition → 422, an unknown organization → 404, a missing or malformed parameter → 400 (Grape's
 * `{error}`). Every call takes `organization_id`. Ours besides: `POST org_mover/move {organization_id,
 * cell}` runs the move (`org-move.ts`); `/admin/organizations/:path/move` (`cells.ts`) stays its alias.
 * The mock is always ready (nothing drains), so 409 never comes.
 */

type Params = Record<string, unknown>;

function params(req: FastifyRequest): Params {
  const body = typeof req.body === 'object' && req.body !== null ? (req.body as Params) : {};
  return { ...(req.query as Params), ...body };
}

/** Grape's Integer coercion of a required parameter; undefined after answering 400. */
function organizationOf(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: CellContext,
): TopologyOrganization | undefined {
  const raw = params(req).organization_id;
  if (raw === undefined || raw === '') {
    void reply.code(400).send({ error: 'organization_id is missing' });
    return undefined;
  }
  const text = String(raw);
  if (!/^-?\d+$/.test(text)) {
    void reply.code(400).send({ error: 'organization_id is invalid' });
    return undefined;
  }
  const org = ctx.model.organizations().find((o) => o.id === Number(text));
  if (!org) void reply.code(404).send({ message: '404 Organization Not Found' });
  return org;
}

/** GitLab's default organization (id 1) never enters maintenance. */
const DEFAULT_ORGANIZATION_ID = 1;

function transition(scope: FastifyInstance, ctx: CellContext, event: TransitionEvent): void {
  scope.post(`/org_mover/${event}`, async (req, reply) => {
    const org = organizationOf(req, reply, ctx);
    if (!org) return reply;
    const reason = params(req).maintenance_reason;
    if (event === 'start_maintenance') {
      if (reason === undefined || reason === '')
        return reply.code(400).send({ error: 'maintenance_reason is missing' });
      if (!isMaintenanceReason(reason))
        return reply.code(400).send({ error: 'maintenance_reason does not have a valid value' });
    }
    if (
      (event === 'start_maintenance' || event === 'confirm_maintenance') &&
      org.id === DEFAULT_ORGANIZATION_ID
    )
      return reply
        .code(422)
        .send({ message: `${event} transition is not allowed for the default organization` });
    const result = ctx.world.maintenance.transition(
      org.path,
      event,
      isMaintenanceReason(reason) ? reason : undefined,
    );
    if (!result.ok) return reply.code(422).send({ message: result.message });
    req.log.info(
      { organization: org.path, event, state: ctx.world.maintenance.status(org.path).state },
      'org_mover',
    );
    return reply.code(204).send();
  });
}

export function registerOrgMover(scope: FastifyInstance, ctx: CellContext): void {
  scope.get('/org_mover/maintenance_state', async (req, reply) => {
    const org = organizationOf(req, reply, ctx);
    return org ? { state: ctx.world.maintenance.status(org.path).state } : reply;
  });
  scope.get('/org_mover/maintenance_readiness', async (req, reply) => {
    const org = organizationOf(req, reply, ctx);
    return org ? { ready: true, blocking_reason: null } : reply;
  });
  for (const event of [
    'start_maintenance',
    'confirm_maintenance',
    'cancel_maintenance',
    'exit_maintenance',
  ] as const)
    transition(scope, ctx, event);
  scope.post('/org_mover/move', async (req, reply) => {
    const org = organizationOf(req, reply, ctx);
    if (!org) return reply;
    const cell = params(req).cell;
    if (typeof cell !== 'string' || cell === '') return reply.code(400).send({ error: 'cell is missing' });
    const result = await moveOrganization(ctx.model, org.path, cell);
    if (ctx.claims) await ctx.claims.afterMove(result);
    return result;
  });
}
