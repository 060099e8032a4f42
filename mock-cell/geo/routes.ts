import type { FastifyInstance, FastifyReply } from 'fastify';
import { headerValue } from '../../lib/http-headers.js';
import { findProject } from '../access.js';
import type { CellContext } from '../context.js';
import { GEO_UPDATED_PATH, type RepositoryUpdatedJson } from './notify.js';
import { GEO_TEXTS, geoRefusalText } from './preauth.js';
import { verifyGeoToken } from './token.js';

/**
 * A secondary's Geo endpoints: the primary's update notice (GL-Geo signed by the primary), and,
 * under the internal API (shell JWT), the test switch `/_test/geo/replication` that pauses or
 * resumes replication and tells whether a project's replica is behind.
 */
const updatedSchema = {
  type: 'object',
  required: ['project', 'refs'],
  properties: {
    project: { type: 'string', minLength: 1 },
    refs: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

function unauthorized(reply: FastifyReply, text: string) {
  return reply.code(401).type('text/plain; charset=utf-8').send(text);
}

export function registerGeoUpdates(app: FastifyInstance, ctx: CellContext): void {
  const geo = ctx.geo;
  const replicas = geo?.replicas;
  if (!geo || !replicas) return;
  app.post<{ Body: RepositoryUpdatedJson }>(
    GEO_UPDATED_PATH,
    { schema: { body: updatedSchema } },
    async (req, reply) => {
      const primary = geo.role.nodes.filter((n) => n.accessKey === geo.role.primary.accessKey);
      const verdict = await verifyGeoToken(headerValue(req.headers, 'authorization'), primary);
      if (!verdict.ok) return unauthorized(reply, geoRefusalText(verdict));
      if (verdict.data.scope !== req.body.project) return unauthorized(reply, GEO_TEXTS.unauthorizedScope);
      const project = findProject(ctx.model, { path: req.body.project });
      if (!project) return reply.code(404).send({ message: '404 Project Not Found' });
      replicas.notify(project, req.body.refs);
      return { status: 'ok' };
    },
  );
}

export function registerGeoTestSwitch(scope: FastifyInstance, ctx: CellContext): void {
  const replicas = ctx.geo?.replicas;
  if (!replicas) return;
  scope.post<{ Body: { paused: boolean } }>(
    '/_test/geo/replication',
    {
      schema: { body: { type: 'object', required: ['paused'], properties: { paused: { type: 'boolean' } } } },
    },
    async (req) => {
      replicas.setPaused(req.body.paused);
      return { paused: replicas.paused };
    },
  );
  scope.get<{ Querystring: { project?: string } }>('/_test/geo/replication', async (req, reply) => {
    const project = findProject(ctx.model, { path: req.query.project ?? '' });
    if (!project) return reply.code(404).send({ message: '404 Project Not Found' });
    return { paused: replicas.paused, behind: await replicas.behind(project) };
  });
}
