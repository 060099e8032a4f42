import type { FastifyReply, FastifyRequest } from 'fastify';
import { CELL_REDIRECT_HEADER, type GitAction } from '../../lib/contracts/internal-api.js';
import { WORKHORSE_CONTENT_TYPE } from '../../lib/contracts/workhorse.js';
import { forwardedClient, headerValue } from '../../lib/http-headers.js';
import { SHELL_HEADER, verifyShellJwt, verifyWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import { ANY_CHANGES } from '../changes.js';
import { geoPreauthorize } from '../geo/preauth.js';
import { isGeoAuthAttempt } from '../geo/token.js';
import { actorFromGlId } from '../identity.js';
import { workhorsePayload } from '../payloads.js';
import type { PageHandler } from '../web/page-handler.js';

/**
 * Workhorse pre-authorization of the SSH tunnel routes (Rails' git_http controller):
 * `POST /<ns>/<project>.git/ssh-upload-pack|ssh-receive-pack|ssh-upload-archive`, no body. The
 * routes are in the route table (`routing/table.ts`); the dispatcher calls these handlers. The
 * authorizing answer is the `WorkhorsePreauthJson` contract (`lib/contracts/workhorse.ts`).
 */

function plain(reply: FastifyReply, status: number, text: string) {
  return reply.code(status).type('text/plain; charset=utf-8').send(text);
}

/** The client's address as Rails would see it behind the bridge: first X-Forwarded-For hop, else the peer. */
function remoteIp(req: FastifyRequest): string | undefined {
  return forwardedClient(req.headers) || req.ip || undefined;
}

/**
 * The handler of one tunnel route: `route` is the path's last segment, e.g. `ssh-upload-pack`.
 * `idsOnly`: the gl_id must be `user-N` or `key-N`, as Rails' `identify` for gitlab-shell's
 * SSH-over-HTTP routes (`ssh-upload-pack`, `ssh-receive-pack`).
 */
function preauth(route: string, action: GitAction, idsOnly: boolean): PageHandler {
  return async (req, reply, m, ctx) => {
    const repoPath = `${m.params.namespace_id}/${m.params.repository_path}`;

    const workhorse = await verifyWorkhorseJwt(ctx.workhorseKey, headerValue(req.headers, WORKHORSE_HEADER));
    if (!workhorse.ok) {
      req.log.info({ reason: workhorse.reason }, 'workhorse JWT rejected');
      return plain(reply, 403, 'Forbidden');
    }
    // EE: a request signed by a Geo site authenticates by its GL-Geo token instead (geo/preauth.ts).
    if (idsOnly && isGeoAuthAttempt(headerValue(req.headers, 'authorization')))
      return geoPreauthorize(req, reply, ctx, action, repoPath);
    const shell = await verifyShellJwt(ctx.shellKey, headerValue(req.headers, SHELL_HEADER), {
      requireGlId: true,
    });
    const actor = shell.ok ? actorFromGlId(ctx.model, String(shell.claims.gl_id), { idsOnly }) : undefined;
    if (!actor) {
      req.log.info({ reason: shell.ok ? 'unknown gl_id' : shell.reason }, 'shell authentication failed');
      return plain(reply, 404, 'Not found');
    }

    const decision = await ctx.access.check({
      cell: ctx.cell,
      action,
      actor,
      project: { path: repoPath },
      changes: ANY_CHANGES,
    });
    req.log.info(
      { route, project: repoPath, user: actor.user.username, outcome: decision.outcome },
      'pre-authorization',
    );
    switch (decision.outcome) {
      case 'forbidden':
        return plain(reply, 403, decision.message);
      case 'not-found':
        return plain(reply, 404, decision.message);
      case 'misdirected':
        reply.header(CELL_REDIRECT_HEADER, decision.cell);
        return plain(reply, 421, decision.message);
      case 'allowed': {
        const payload = workhorsePayload(ctx.model, decision.project, actor, ctx.gitalyToken, remoteIp(req));
        // Sent as bytes so the content type stays exactly Workhorse's (no charset parameter added).
        return reply
          .code(200)
          .header('content-type', WORKHORSE_CONTENT_TYPE)
          .send(Buffer.from(JSON.stringify(payload)));
      }
    }
  };
}

export const PREAUTH_HANDLERS = {
  ssh_upload_pack: preauth('ssh-upload-pack', 'git-upload-pack', true),
  ssh_receive_pack: preauth('ssh-receive-pack', 'git-receive-pack', true),
  ssh_upload_archive: preauth('ssh-upload-archive', 'git-upload-archive', false),
} satisfies Record<string, PageHandler>;
