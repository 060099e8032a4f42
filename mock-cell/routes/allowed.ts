import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  type AllowedDenialJson,
  type AllowedRequestJson,
  CELL_REDIRECT_HEADER,
  CUSTOM_ACTION_STATUS,
} from '../../lib/contracts/internal-api.js';
import type { AccessDecision, ProjectRef } from '../access.js';
import { parseChanges } from '../changes.js';
import type { CellContext } from '../context.js';
import { BadRequest } from '../errors.js';
import { geoCustomAction } from '../geo/custom-action.js';
import { actorFromParams } from '../identity.js';
import { allowedPayload } from '../payloads.js';
import { errorResponse } from './errors.js';

/**
 * `POST /api/v4/internal/allowed`: the body is `AllowedRequestJson` (GitLab Shell / router fields plus
 * Gitaly hooks' fields), the answers `AllowedJson` or `AllowedDenialJson` (`lib/contracts/internal-api.ts`).
 */
type AllowedBody = AllowedRequestJson;

const bodySchema = {
  type: 'object',
  required: ['action'],
  properties: {
    action: { type: 'string' },
    project: { type: 'string' },
    gl_repository: { type: 'string' },
    key_id: { type: ['string', 'integer'] },
    user_id: { type: ['string', 'integer'] },
    username: { type: 'string' },
    changes: { type: 'string' },
    protocol: { type: 'string' },
    check_ip: { type: 'string' },
    env: { type: ['string', 'object'] },
    push_options: { type: ['array', 'null'], items: { type: 'string' } },
  },
} as const;

/** GIT_OBJECT_DIRECTORY_RELATIVE from the hook's `env` field, when present. */
function quarantineDir(env: AllowedBody['env']): string | undefined {
  if (env === undefined || env === '') return undefined;
  let parsed: unknown = env;
  if (typeof env === 'string') {
    try {
      parsed = JSON.parse(env);
    } catch {
      throw BadRequest('env must be a JSON object');
    }
  }
  if (parsed === null || typeof parsed !== 'object') throw BadRequest('env must be a JSON object');
  const dir = (parsed as Record<string, unknown>).GIT_OBJECT_DIRECTORY_RELATIVE;
  if (dir !== undefined && typeof dir !== 'string')
    throw BadRequest('env.GIT_OBJECT_DIRECTORY_RELATIVE must be a string');
  return dir;
}

/** Denials as Rails renders them for `/allowed`: 401 so GitLab Shell shows the message, 404, or 421. */
function sendDenial(reply: FastifyReply, decision: Exclude<AccessDecision, { outcome: 'allowed' }>) {
  if (decision.outcome === 'misdirected') reply.header(CELL_REDIRECT_HEADER, decision.cell);
  const status = { forbidden: 401, 'not-found': 404, misdirected: 421 }[decision.outcome];
  const denial: AllowedDenialJson = { status: false, message: decision.message };
  return reply.code(status).send(denial);
}

export function registerAllowed(scope: FastifyInstance, ctx: CellContext): void {
  scope.post<{ Body: AllowedBody }>(
    '/allowed',
    {
      schema: { body: bodySchema },
      errorHandler: (err, req, reply) => {
        const { status, message } = errorResponse(err, req.log);
        return reply.code(status).send({ status: false, message });
      },
      onResponse: async (req, reply) => {
        // Gitaly hooks identify the repository by gl_repository; GitLab Shell never sends it.
        if (req.body?.gl_repository !== undefined) ctx.hookLog.record('allowed', reply.statusCode, req.body);
      },
    },
    async (req, reply) => {
      const body = req.body;
      const found = actorFromParams(ctx.model, body);
      if (!found.ok) return reply.code(404).send({ status: false, message: found.message });
      const project: ProjectRef =
        body.gl_repository !== undefined
          ? { glRepository: body.gl_repository }
          : { path: body.project ?? '' };
      const decision = await ctx.access.check({
        cell: ctx.cell,
        action: body.action,
        actor: found.actor,
        project,
        changes: parseChanges(body.changes),
        objectDirectoryRelative: quarantineDir(body.env),
      });
      req.log.info(
        {
          action: body.action,
          project: body.gl_repository ?? body.project,
          user: found.actor.user.username,
          outcome: decision.outcome,
        },
        'access check',
      );
      // A Geo secondary hands pushes (and fetches while behind) to the primary: HTTP 300.
      const replicas = ctx.geo?.replicas;
      if (replicas && ctx.geo && body.gl_repository === undefined) {
        const geo = { model: ctx.model, role: ctx.geo.role, replicas };
        const custom = await geoCustomAction(geo, {
          action: body.action,
          decision,
          actor: found.actor,
          project,
        });
        if (custom) return reply.code(CUSTOM_ACTION_STATUS).send(custom);
      }
      if (decision.outcome !== 'allowed') return sendDenial(reply, decision);
      return allowedPayload(ctx.model, decision.project, found.actor, ctx.gitalyToken);
    },
  );
}
