import type { FastifyInstance } from 'fastify';
import type { CellContext } from '../context.js';
import { learn } from '../learn.js';

/** `GET /api/v4/internal/cells/learn?method=GET&path_info=<path>` (contracts.md "Learn answers"). */
export function registerLearn(scope: FastifyInstance, ctx: CellContext): void {
  scope.get<{ Querystring: { method?: string; path_info: string } }>(
    '/cells/learn',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['path_info'],
          properties: { method: { type: 'string' }, path_info: { type: 'string', minLength: 1 } },
        },
      },
    },
    async (req) => learn(ctx.model, req.query.path_info, req.query.method || 'GET'),
  );
}
