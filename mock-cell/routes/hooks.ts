import type { FastifyInstance } from 'fastify';
import { findProject } from '../access.js';
import { ANY_CHANGES, branchName, isZeroSha, parseChanges } from '../changes.js';
import type { CellContext } from '../context.js';
import { notifySecondaries } from '../geo/notify.js';
import type { TopologyProject } from '../topology-types.js';

/** `/pre_receive`, `/post_receive` (Gitaly hooks) and the test view of the hook log. */

export interface PostReceiveBody {
  gl_repository: string;
  identifier?: string;
  changes?: string;
  push_options?: string[] | null;
}

export interface PostReceiveMessage {
  message: string;
  type: 'basic' | 'alert';
}

const glRepositorySchema = {
  type: 'object',
  required: ['gl_repository'],
  properties: { gl_repository: { type: 'string', minLength: 1 } },
} as const;

const postReceiveSchema = {
  type: 'object',
  required: ['gl_repository'],
  properties: {
    gl_repository: { type: 'string', minLength: 1 },
    identifier: { type: 'string' },
    changes: { type: 'string' },
    push_options: { type: ['array', 'null'], items: { type: 'string' } },
  },
} as const;

/** GitLab's hint after pushing a new branch (MergeRequests::GetUrlsService). */
export function mergeRequestMessage(
  externalUrl: string,
  projectPath: string,
  branch: string,
): PostReceiveMessage {
  const url = `${externalUrl}/${projectPath}/-/merge_requests/new?merge_request%5Bsource_branch%5D=${encodeURIComponent(branch)}`;
  return { message: `To create a merge request for ${branch}, visit:\n  ${url}`, type: 'basic' };
}

function postReceiveMessages(ctx: CellContext, project: TopologyProject, changes: string | undefined) {
  const parsed = parseChanges(changes);
  if (parsed === ANY_CHANGES) return [];
  const messages: PostReceiveMessage[] = [];
  for (const change of parsed) {
    const branch = branchName(change.ref);
    if (branch === undefined || branch === project.defaultBranch) continue;
    if (!isZeroSha(change.oldrev) || isZeroSha(change.newrev)) continue;
    messages.push(mergeRequestMessage(ctx.model.externalUrl, ctx.model.fullPath(project), branch));
  }
  return messages;
}

export function registerHooks(scope: FastifyInstance, ctx: CellContext): void {
  scope.post<{ Body: { gl_repository: string } }>(
    '/pre_receive',
    {
      schema: { body: glRepositorySchema },
      onResponse: async (req, reply) => ctx.hookLog.record('pre_receive', reply.statusCode, req.body),
    },
    async (req, reply) => {
      if (!findProject(ctx.model, { glRepository: req.body.gl_repository })) {
        return reply.code(404).send({ message: '404 Project Not Found' });
      }
      return { reference_counter_increased: true };
    },
  );

  scope.post<{ Body: PostReceiveBody }>(
    '/post_receive',
    {
      schema: { body: postReceiveSchema },
      onResponse: async (req, reply) => ctx.hookLog.record('post_receive', reply.statusCode, req.body),
    },
    async (req, reply) => {
      const project = findProject(ctx.model, { glRepository: req.body.gl_repository });
      if (!project) return reply.code(404).send({ message: '404 Project Not Found' });
      // The push is in: the cell's Geo secondaries learn of it (in the background).
      const geo = ctx.geo;
      if (geo)
        void notifySecondaries(geo.role, ctx.model, project, req.log).catch((err: unknown) => {
          req.log.warn({ err }, 'geo: update notice failed');
        });
      return {
        reference_counter_decreased: true,
        messages: postReceiveMessages(ctx, project, req.body.changes),
      };
    },
  );

  scope.get('/_test/hook-calls', async () => ({ calls: ctx.hookLog.calls() }));
}
