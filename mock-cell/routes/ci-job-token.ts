import type { FastifyInstance } from 'fastify';
import type { CellContext } from '../context.js';

/**
 * `POST /_test/ci_job_token {username, project}` → `{token}`: a `glcbt-` job token of this cell for
 * the user and project (ours, for fixtures without a control channel; GitLab hands job tokens to runners).
 */
export function registerJobTokenIssuer(scope: FastifyInstance, ctx: CellContext): void {
  scope.post('/_test/ci_job_token', async (req, reply) => {
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<
      string,
      unknown
    >;
    const { username, project } = body;
    const user = typeof username === 'string' ? ctx.model.userByUsername(username) : undefined;
    if (!user) return reply.code(404).send({ message: '404 User Not Found' });
    const found = typeof project === 'string' ? ctx.model.projectByPath(project) : undefined;
    if (!found) return reply.code(404).send({ message: '404 Project Not Found' });
    return { token: ctx.jobTokens.issue(ctx.cell, user, found) };
  });
}
