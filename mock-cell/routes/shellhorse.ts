import type { FastifyInstance } from 'fastify';
import { headerValue } from '../../lib/http-headers.js';
import { SHELL_HEADER, verifyShellJwt, verifyWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import { ANY_CHANGES } from '../changes.js';
import type { CellContext } from '../context.js';
import { type ActorParams, actorFromParams } from '../identity.js';

/**
 * `POST /api/v4/internal/shellhorse/git_audit_event` (GitLab's `shellhorse.rb`), which gitlab-shell
 * (SSH) and Workhorse (HTTP) call after a fetch or push when `/allowed` said `need_audit`: the shell
 * or the Workhorse JWT; `action`, `protocol`, `gl_repository`, `changes` required (else Grape's
 * `400 {error}`); an action other than upload/receive-pack → `400 {status:false, message:"No valid
 * action specified"}`; then the access check of `/allowed` (its denials); then, as GitLab CE (no audit
 * event streaming, so `need_audit` is always false), `200 {status:false, message:"No git audit event
 * needed"}`. The call is in the journal with its fields.
 */

const AUDITED = new Set(['git-upload-pack', 'git-receive-pack']);
const REQUIRED = ['action', 'protocol', 'gl_repository', 'changes'] as const;

type AuditBody = ActorParams & Partial<Record<(typeof REQUIRED)[number] | 'check_ip', unknown>>;

export function registerShellhorse(app: FastifyInstance, ctx: CellContext): void {
  app.register(async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      const shell = await verifyShellJwt(ctx.shellKey, headerValue(req.headers, SHELL_HEADER));
      if (shell.ok) return;
      const workhorse = await verifyWorkhorseJwt(
        ctx.workhorseKey,
        headerValue(req.headers, WORKHORSE_HEADER),
      );
      if (!workhorse.ok) return reply.code(401).send({ message: '401 Unauthorized' });
    });
    scope.post<{ Body: AuditBody }>('/api/v4/internal/shellhorse/git_audit_event', async (req, reply) => {
      const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as AuditBody;
      const missing = REQUIRED.filter((k) => typeof body[k] !== 'string');
      if (missing.length > 0)
        return reply.code(400).send({ error: missing.map((k) => `${k} is missing`).join(', ') });
      if (!AUDITED.has(body.action as string))
        return reply.code(400).send({ status: false, message: 'No valid action specified' });
      const found = actorFromParams(ctx.model, body);
      if (!found.ok) return reply.code(404).send({ status: false, message: found.message });
      const decision = await ctx.access.check({
        cell: ctx.cell,
        action: body.action as string,
        actor: found.actor,
        project: { glRepository: body.gl_repository as string },
        changes: ANY_CHANGES,
      });
      if (decision.outcome !== 'allowed') {
        const status = { forbidden: 401, 'not-found': 404, misdirected: 421 }[decision.outcome];
        return reply.code(status).send({ status: false, message: decision.message });
      }
      return { status: false, message: 'No git audit event needed' };
    });
  });
}
