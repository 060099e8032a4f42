import type { FastifyInstance } from 'fastify';
import type { CellContext } from '../context.js';
import { moveOrganization } from '../org-move.js';
import { routesSnapshot, snapshotText } from '../routing/snapshot.js';

/**
 * Internal endpoints for routing tests and operators (under /api/v4/internal, shell JWT):
 * - `GET /cells/routes_snapshot`: the cell's route table as `gitlab_routes.json`;
 * - `POST /admin/organizations/:path/move {cell}`: moves an organization (model + repositories).
 */
export function registerCellsAdmin(scope: FastifyInstance, ctx: CellContext): void {
  const snapshot = snapshotText(routesSnapshot());
  scope.get('/cells/routes_snapshot', async (_req, reply) => reply.type('application/json').send(snapshot));

  scope.post<{ Params: { path: string }; Body: { cell: string } }>(
    '/admin/organizations/:path/move',
    {
      schema: {
        body: {
          type: 'object',
          required: ['cell'],
          properties: { cell: { type: 'string', minLength: 1 } },
        },
      },
    },
    async (req) => {
      const result = await moveOrganization(ctx.model, req.params.path, req.body.cell);
      req.log.info(
        {
          organization: result.organization,
          from: result.from,
          to: result.to,
          repositories: result.repositories.length,
        },
        'organization moved',
      );
      // The Topology Service follows the move: the new cell claims the organization's routes.
      if (ctx.claims) await ctx.claims.afterMove(result);
      return result;
    },
  );
}
