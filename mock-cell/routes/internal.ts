import type { FastifyInstance } from 'fastify';
import type { AuthorizedKeyJson, DiscoverJson } from '../../lib/contracts/internal-api.js';
import type { CellContext } from '../context.js';
import { type ActorParams, actorFromParams } from '../identity.js';

/** Version strings the mock reports on `/check` (GitLab Shell prints them in `gitlab-shell check`). */
export const GITLAB_VERSION = '18.3.0-mock';
export const GITLAB_REV = 'mock-cell';

/**
 * `/check`, `/authorized_keys`, `/discover` of the internal API (mounted under /api/v4/internal); the
 * bodies are the `AuthorizedKeyJson` and `DiscoverJson` contracts of `lib/contracts/internal-api.ts`.
 */
export function registerInternalRoutes(scope: FastifyInstance, ctx: CellContext): void {
  scope.get('/check', async () => ({
    api_version: 'v4',
    gitlab_version: GITLAB_VERSION,
    gitlab_rev: GITLAB_REV,
    redis: true,
  }));

  scope.get<{ Querystring: { key: string } }>(
    '/authorized_keys',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['key'],
          properties: { key: { type: 'string', minLength: 1 } },
        },
      },
    },
    async (req, reply) => {
      // A raw "+" in a query string decodes to a space; base64 never contains spaces.
      const key = ctx.model.keyByBlob(req.query.key.trim().replaceAll(' ', '+'));
      if (!key) return reply.code(404).send({ message: '404 Key Not Found' });
      const answer: AuthorizedKeyJson = {
        id: key.id,
        title: key.title,
        key: key.key,
        created_at: ctx.model.loadedAt.toISOString(),
        expires_at: null,
      };
      return answer;
    },
  );

  scope.get<{ Querystring: ActorParams }>(
    '/discover',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            key_id: { type: 'string' },
            user_id: { type: 'string' },
            username: { type: 'string' },
          },
        },
      },
    },
    async (req, reply) => {
      const found = actorFromParams(ctx.model, req.query);
      // Rails presents a missing user as JSON null; GitLab Shell then greets "Anonymous".
      if (!found.ok) return reply.type('application/json').send(JSON.stringify(null satisfies DiscoverJson));
      const { user } = found.actor;
      const answer: DiscoverJson = { id: user.id, name: user.name, username: user.username };
      return answer;
    },
  );
}
