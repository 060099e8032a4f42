import type { FastifyInstance } from 'fastify';
import { type JwtKey, SHELL_HEADER, verifyShellJwt } from '../../lib/jwt.js';

/**
 * Guards every route of the scope it is added to, as Rails guards `/api/v4/internal/*`: a valid
 * `Gitlab-Shell-Api-Request` JWT (HS256, iss gitlab-shell, 60 s leeway) or `401 {"message":"401 Unauthorized"}`.
 */
export function addShellAuth(scope: FastifyInstance, key: JwtKey): void {
  scope.addHook('onRequest', async (req, reply) => {
    const header = req.headers[SHELL_HEADER];
    const result = await verifyShellJwt(key, typeof header === 'string' ? header : undefined);
    if (!result.ok) {
      req.log.info({ reason: result.reason }, 'shell JWT rejected');
      return reply.code(401).send({ message: '401 Unauthorized' });
    }
  });
}
