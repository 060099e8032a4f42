/**
 * `git-lfs-authenticate <path> <download|upload>`, as gitlab-shell's `lfsauthenticate`: `/allowed`
 * for `git-upload-pack` (download) or `git-receive-pack` (upload) on the project's cell, then
 * `/lfs_authenticate` on that same cell; prints `{"header":{"Authorization":"Basic …"},"href":
 * "<repository_http_path>/info/lfs","expires_in":…}`. A failed `/lfs_authenticate` prints nothing
 * (exit 0), as gitlab-shell.
 */
import type { LfsAuthenticateJson } from '../../lib/contracts/account-api.js';
import { normalizeProjectPath } from '../../lib/repo-path.js';
import { actorFields } from '../cells/actor.js';
import type { AllowedAnswer } from '../cells/internal-api.js';
import type { CellConfig } from '../config.js';
import { MisdirectedError, PROJECT_NOT_FOUND_MESSAGE, RouterError } from '../errors.js';
import type { GitService } from '../ssh/command.js';
import { callContext } from './account.js';
import type { Command, CommandContext } from './context.js';

const ACTIONS = { download: 'git-upload-pack', upload: 'git-receive-pack' } as const;

/** `/allowed` on the owning cell (one re-learn on a 421, as the git commands). */
async function allowedCell(
  ctx: CommandContext,
  action: GitService,
  project: string,
): Promise<{ cell: CellConfig; access: AllowedAnswer }> {
  const call = callContext(ctx);
  const route = `/${project}`;
  for (let attempt = 1; ; attempt++) {
    const { cell } = await ctx.deps.classifier.classify(route, 'GET', call);
    try {
      const result = await ctx.deps.api.allowed(
        cell,
        {
          action,
          project: `${project}.git`,
          ...actorFields(ctx.actor),
          changes: '_any',
          protocol: 'ssh',
          check_ip: ctx.remoteIp,
        },
        call,
      );
      // A Geo secondary's custom action has no LFS endpoint to answer here.
      if (result.kind !== 'tunnel')
        throw RouterError.cellsRouting(
          'cells routing: custom actions are not supported for git-lfs-authenticate',
        );
      return { cell, access: result };
    } catch (err) {
      if (!(err instanceof MisdirectedError) || attempt >= 2) throw err;
      ctx.deps.metrics.redirects++;
      ctx.deps.classifier.invalidate(route);
    }
  }
}

/** gitlab-shell sends the key id, or (certificate login) the user id `/allowed` answered. */
function lfsActor(ctx: CommandContext, glId: string): { key_id: string } | { user_id: number } {
  if ('keyId' in ctx.actor) return { key_id: ctx.actor.keyId };
  return { user_id: Number(glId.replace(/^user-/, '')) };
}

export const gitLfsAuthenticate: Command = {
  async execute(ctx: CommandContext): Promise<number> {
    const [repo, operation] = ctx.args;
    if (repo === undefined || operation === undefined) throw RouterError.accountRefused('Disallowed command');
    if (operation !== 'download' && operation !== 'upload')
      throw RouterError.accountRefused('Disallowed command');
    const project = normalizeProjectPath(repo);
    if (!project) throw RouterError.projectNotFound(PROJECT_NOT_FOUND_MESSAGE);
    const { cell, access } = await allowedCell(ctx, ACTIONS[operation], project);
    let answer: Awaited<ReturnType<typeof ctx.deps.api.post<LfsAuthenticateJson>>>;
    try {
      answer = await ctx.deps.api.post<LfsAuthenticateJson>(
        cell,
        '/lfs_authenticate',
        { operation, project: repo, ...lfsActor(ctx, access.glId) },
        callContext(ctx),
      );
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.log.info({ err, operation }, 'LFS authentication failed');
      return 0;
    }
    const basic = Buffer.from(`${String(answer.username)}:${String(answer.lfs_token)}`).toString('base64');
    const payload: Record<string, unknown> = {
      header: { Authorization: `Basic ${basic}` },
      href: `${String(answer.repository_http_path)}/info/lfs`,
    };
    // Go's `omitempty`: no expires_in when the cell gave none.
    if (typeof answer.expires_in === 'number' && answer.expires_in !== 0)
      payload.expires_in = answer.expires_in;
    ctx.io.stdout.write(`${JSON.stringify(payload)}\n`);
    return 0;
  },
};
