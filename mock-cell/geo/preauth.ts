import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GitAction } from '../../lib/contracts/internal-api.js';
import { WORKHORSE_CONTENT_TYPE } from '../../lib/contracts/workhorse.js';
import { forwardedClient, headerValue } from '../../lib/http-headers.js';
import { normalizeProjectPath } from '../../lib/repo-path.js';
import { type AccessDecision, AccessMessages, findProject } from '../access.js';
import { ANY_CHANGES } from '../changes.js';
import type { CellContext } from '../context.js';
import { type Actor, actorFromGlId } from '../identity.js';
import { workhorsePayload } from '../payloads.js';
import { type GeoVerdict, verifyGeoToken } from './token.js';

/**
 * Pre-authorization of a tunnel request signed by a Geo site (EE `Repositories::GitHttpController`):
 * `Authorization: GL-Geo <access_key>:<JWT>`. A token that does not decode (unknown node, forged,
 * malformed) → `401 Geo JWT authentication failed: Bad token`; one expired or not yet valid →
 * `401 Geo JWT authentication failed: Invalid signature time ` (with Rails' trailing space); a `scope` other than the repository
 * path → `401 … Unauthorized scope`. The token's `gl_id` (`user-N`, `key-N`) is the actor; without
 * one the actor is the Geo node itself (`:geo`, may fetch but not push); an unknown one → `403 Geo
 * push user is invalid.` Then the usual access check, and `ssh-receive-pack` on a site that is not
 * the primary → `403 Cannot push to secondary.` Nothing here reads the request body.
 */
export const GEO_TEXTS = {
  badToken: 'Geo JWT authentication failed: Bad token',
  invalidSignatureTime: 'Geo JWT authentication failed: Invalid signature time ',
  unauthorizedScope: 'Geo JWT authentication failed: Unauthorized scope',
  invalidPushUser: 'Geo push user is invalid.',
  pushToSecondary: 'Cannot push to secondary.',
} as const;

/** The 401 text of a token that did not verify, by the decoder's reason. */
export function geoRefusalText(verdict: GeoVerdict & { ok: false }): string {
  return verdict.reason === 'signature-time' ? GEO_TEXTS.invalidSignatureTime : GEO_TEXTS.badToken;
}

function plain(reply: FastifyReply, status: number, text: string) {
  return reply.code(status).type('text/plain; charset=utf-8').send(text);
}

async function decide(
  ctx: CellContext,
  action: GitAction,
  actor: Actor | undefined,
  repoPath: string,
): Promise<AccessDecision> {
  if (actor)
    return ctx.access.check({
      cell: ctx.cell,
      action,
      actor,
      project: { path: repoPath },
      changes: ANY_CHANGES,
    });
  // The `:geo` actor: a node replicating may read every repository of its cell, and push nothing.
  const project = findProject(ctx.model, { path: repoPath });
  if (!project || ctx.model.cellOfProject(project).name !== ctx.cell)
    return { outcome: 'not-found', message: AccessMessages.projectNotFound };
  if (action === 'git-receive-pack') return { outcome: 'forbidden', message: AccessMessages.pushCode };
  return { outcome: 'allowed', project };
}

export async function geoPreauthorize(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: CellContext,
  action: GitAction,
  repoPath: string,
) {
  const verdict = await verifyGeoToken(headerValue(req.headers, 'authorization'), ctx.geo?.role.nodes ?? []);
  if (!verdict.ok) {
    req.log.info({ reason: verdict.reason }, 'Geo JWT rejected');
    return plain(reply, 401, geoRefusalText(verdict));
  }
  if (verdict.data.scope !== normalizeProjectPath(repoPath)) {
    req.log.info({ scope: verdict.data.scope, node: verdict.node.site }, 'Geo JWT of another scope');
    return plain(reply, 401, GEO_TEXTS.unauthorizedScope);
  }
  const glId = typeof verdict.data.gl_id === 'string' ? verdict.data.gl_id : undefined;
  const actor = glId ? actorFromGlId(ctx.model, glId, { idsOnly: true }) : undefined;
  if (glId && !actor) return plain(reply, 403, GEO_TEXTS.invalidPushUser);
  const decision = await decide(ctx, action, actor, repoPath);
  req.log.info(
    {
      action,
      project: repoPath,
      node: verdict.node.site,
      user: actor?.user.username ?? ':geo',
      outcome: decision.outcome,
    },
    'Geo pre-authorization',
  );
  if (decision.outcome === 'forbidden') return plain(reply, 403, decision.message);
  if (decision.outcome !== 'allowed') return plain(reply, 404, decision.message);
  if (action === 'git-receive-pack' && ctx.geo?.role.self.role !== 'primary')
    return plain(reply, 403, GEO_TEXTS.pushToSecondary);
  const remoteIp = forwardedClient(req.headers) || req.ip || undefined;
  const payload = workhorsePayload(ctx.model, decision.project, actor, ctx.gitalyToken, remoteIp, true);
  return reply
    .code(200)
    .header('content-type', WORKHORSE_CONTENT_TYPE)
    .send(Buffer.from(JSON.stringify(payload)));
}
