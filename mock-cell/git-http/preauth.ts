import type { FastifyReply, FastifyRequest } from 'fastify';
import { CELL_REDIRECT_HEADER } from '../../lib/contracts/internal-api.js';
import { WORKHORSE_CONTENT_TYPE } from '../../lib/contracts/workhorse.js';
import { forwardedClient, headerValue } from '../../lib/http-headers.js';
import { verifyWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import { type AccessDecision, AccessMessages, findProject } from '../access.js';
import { ANY_CHANGES } from '../changes.js';
import type { CellContext } from '../context.js';
import { workhorsePayload } from '../payloads.js';
import type { RouteMatch } from '../routing/table.js';
import type { TopologyProject } from '../topology-types.js';
import type { PageHandler } from '../web/page-handler.js';
import { type Ability, basicCredentials, findForGitClient, type GitHttpCredential } from './credentials.js';

/**
 * Rails' `Repositories::GitHttpController` as Workhorse pre-authorizes with it: GET
 * `/<path>.git/info/refs?service=…`, POST `/<path>.git/git-upload-pack|git-receive-pack` (no body).
 * Order as Rails runs its filters: the client's credentials (`authenticate_user`, prepended), the
 * Workhorse JWT, then the access check. The answer is `Gitlab::Workhorse.git_http_ok`.
 */

type Action = 'info_refs' | 'git_upload_pack' | 'git_receive_pack';
export type Anonymous = { kind: 'anonymous'; abilities: Ability[] };

function plain(reply: FastifyReply, status: number, text: string) {
  return reply.code(status).type('text/plain; charset=utf-8').send(text);
}

/** Rails' `render_access_denied` after `send_challenges`. */
export function accessDenied(reply: FastifyReply, ctx: CellContext) {
  const help = `${ctx.model.externalUrl}/help/topics/git/troubleshooting_git.md#error-on-git-fetch-http-basic-access-denied`;
  reply.header('www-authenticate', 'Basic realm="GitLab"');
  return plain(
    reply,
    401,
    "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're required to use a token instead of a password. If a token was provided, it was either incorrect, expired, or improperly scoped. " +
      `See ${help}`,
  );
}

/** `params[:service]` for info/refs, else the action dasherized. */
function gitCommand(req: FastifyRequest, action: Action): string {
  if (action !== 'info_refs') return action.replaceAll('_', '-');
  return new URL(req.url, 'http://cell').searchParams.get('service') ?? '';
}

/** What the credentials' kind may reach before the project's own rules (job and deploy tokens: one project). */
export async function decide(
  ctx: CellContext,
  cred: GitHttpCredential | Anonymous,
  command: string,
  project: TopologyProject,
  repoPath: string,
): Promise<AccessDecision> {
  const notFound: AccessDecision = { outcome: 'not-found', message: AccessMessages.projectNotFound };
  const needed: Ability = command === 'git-receive-pack' ? 'push_code' : 'download_code';
  const refusal = needed === 'push_code' ? AccessMessages.pushCode : AccessMessages.download;
  if (command !== 'git-upload-pack' && command !== 'git-receive-pack')
    return { outcome: 'forbidden', message: AccessMessages.commandNotAllowed };
  if (cred.kind === 'anonymous' || cred.kind === 'deploy-token') {
    if (cred.kind === 'deploy-token' && cred.project.id !== project.id) return notFound;
    return cred.abilities.includes(needed)
      ? { outcome: 'allowed', project }
      : { outcome: 'forbidden', message: refusal };
  }
  if (cred.kind === 'job' && cred.project.id !== project.id) return notFound;
  const decision = await ctx.access.check({
    cell: ctx.cell,
    action: command,
    actor: { user: cred.user },
    project: { path: repoPath },
    changes: ANY_CHANGES,
  });
  if (decision.outcome !== 'allowed' || cred.abilities.includes(needed)) return decision;
  return { outcome: 'forbidden', message: refusal };
}

function authorized(
  reply: FastifyReply,
  req: FastifyRequest,
  ctx: CellContext,
  cred: GitHttpCredential | Anonymous,
  project: TopologyProject,
) {
  const user = cred.kind === 'user' || cred.kind === 'job' ? cred.user : undefined;
  const remoteIp = forwardedClient(req.headers) || req.ip || undefined;
  const payload = {
    ...workhorsePayload(ctx.model, project, user ? { user } : undefined, ctx.gitalyToken, remoteIp),
    ...(cred.kind === 'deploy-token' ? { GL_USERNAME: cred.username } : {}),
    ...(cred.kind === 'job' ? { GlBuildID: String(cred.buildId) } : {}),
  };
  return reply
    .code(200)
    .header('content-type', WORKHORSE_CONTENT_TYPE)
    .send(Buffer.from(JSON.stringify(payload)));
}

export function render(reply: FastifyReply, decision: Exclude<AccessDecision, { outcome: 'allowed' }>) {
  if (decision.outcome === 'misdirected') {
    reply.header(CELL_REDIRECT_HEADER, decision.cell);
    return plain(reply, 421, decision.message);
  }
  return plain(reply, decision.outcome === 'forbidden' ? 403 : 404, decision.message);
}

/**
 * Rails' `authenticate_user`: Basic credentials, else anonymous for a download of a public
 * project; undefined means `401`. `lfs`: an LFS path, where the token of `git-lfs-authenticate`
 * counts too.
 */
export function authenticate(
  req: FastifyRequest,
  ctx: CellContext,
  project: TopologyProject | undefined,
  command: string,
  lfs = false,
): GitHttpCredential | Anonymous | undefined {
  const basic = basicCredentials(headerValue(req.headers, 'authorization'));
  if (basic) return findForGitClient(ctx, basic.login, basic.password, project, lfs);
  if (command === 'git-upload-pack' && project?.visibility === 'public')
    return { kind: 'anonymous', abilities: ['download_code'] };
  return undefined;
}

function gitHttpPreauth(action: Action): PageHandler {
  return async (req, reply, m: RouteMatch, ctx) => {
    const repoPath = `${m.params.namespace_id}/${m.params.repository_path}`;
    const project = findProject(ctx.model, { path: repoPath });
    const owner = project ? ctx.model.cellOfProject(project).name : undefined;
    if (project && owner && owner !== ctx.cell) {
      // Without seed 000's signals a cell knows nothing of another cell's project (GitLab has no 421).
      if (!ctx.model.seed000Routing())
        return render(reply, { outcome: 'not-found', message: AccessMessages.projectNotFound });
      const message = `The project ${ctx.model.fullPath(project)} is served by cell ${owner}.`;
      return render(reply, { outcome: 'misdirected', cell: owner, message });
    }
    const command = gitCommand(req, action);
    const cred = authenticate(req, ctx, project, command);
    if (!cred) {
      req.log.info(
        { action, project: repoPath, basic: req.headers.authorization !== undefined },
        'git http authentication failed',
      );
      return accessDenied(reply, ctx);
    }
    const jwt = await verifyWorkhorseJwt(ctx.workhorseKey, headerValue(req.headers, WORKHORSE_HEADER));
    if (!jwt.ok)
      return plain(
        reply,
        403,
        jwt.reason === 'missing' ? 'Nil JSON web token' : 'Signature verification failed',
      );
    const decision = project
      ? await decide(ctx, cred, command, project, repoPath)
      : ({ outcome: 'not-found', message: AccessMessages.projectNotFound } as const);
    req.log.info(
      { action, project: repoPath, credential: cred.kind, outcome: decision.outcome },
      'git http pre-authorization',
    );
    if (decision.outcome !== 'allowed') return render(reply, decision);
    return authorized(reply, req, ctx, cred, decision.project);
  };
}

export const GIT_HTTP_HANDLERS = {
  git_info_refs: gitHttpPreauth('info_refs'),
  git_upload_pack: gitHttpPreauth('git_upload_pack'),
  git_receive_pack: gitHttpPreauth('git_receive_pack'),
} satisfies Record<string, PageHandler>;
