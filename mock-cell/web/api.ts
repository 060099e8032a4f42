import type { FastifyReply, FastifyRequest } from 'fastify';
import { effectiveLevel } from '../access.js';
import type { CellContext } from '../context.js';
import { projectByApiId } from '../learn.js';
import type { RouteMatch } from '../routing/table.js';
import { PAT_SCOPES, type PatScope, RUNNER_TYPES, type RunnerType } from '../tokens.js';
import { AccessLevel, type TopologyUser } from '../topology-types.js';
import { hasScope, type Visitor, visitor } from './identity.js';
import type { PageHandler } from './page-handler.js';
import { canView } from './project-view.js';
import { notMine } from './respond.js';

/**
 * The REST API endpoints of the routing flows (Grape's shapes): personal access tokens and runners
 * minted as routable tokens, and two endpoints that accept tokens. Every answer carries
 * `X-Gitlab-Cell` (set for the whole app), so a test sees which cell served it.
 */

const unauthorized = (reply: FastifyReply) => reply.code(401).send({ message: '401 Unauthorized' });
const forbidden = (reply: FastifyReply) => reply.code(403).send({ message: '403 Forbidden' });
const badRequest = (reply: FastifyReply, error: string) => reply.code(400).send({ error });
const notFound = (reply: FastifyReply, what: string) =>
  reply.code(404).send({ message: `404 ${what} Not Found` });

function insufficientScope(reply: FastifyReply, scopes: readonly PatScope[]) {
  return reply.code(403).send({
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: scopes.join(' '),
  });
}

/** The signed-in user of an API request with one of `scopes`, or the refusal already sent. */
function apiUser(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: CellContext,
  scopes: readonly PatScope[],
): { user: TopologyUser } | { sent: FastifyReply } {
  const v = visitor(req, ctx);
  if (v.kind !== 'user') return { sent: unauthorized(reply) };
  if (!hasScope(v, scopes)) return { sent: insufficientScope(reply, scopes) };
  return { user: v.user };
}

/** Grape answers only JSON here; another format suffix is a 406. */
function jsonOnly(m: RouteMatch, reply: FastifyReply): FastifyReply | undefined {
  return m.format === undefined || m.format === 'json'
    ? undefined
    : reply.code(406).send({ message: '406 Not Acceptable' });
}

function body(req: FastifyRequest): Record<string, unknown> {
  return req.body !== null && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
}

function userJson(ctx: CellContext, user: TopologyUser, viewer: TopologyUser) {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: 'active',
    web_url: `${ctx.model.externalUrl}/${user.username}`,
    ...(viewer.admin === true ? { is_admin: user.admin === true } : {}),
  };
}

const apiUserHandler: PageHandler = (req, reply, m, ctx) => {
  const refused = jsonOnly(m, reply);
  if (refused) return refused;
  const auth = apiUser(req, reply, ctx, ['api', 'read_api', 'read_user']);
  if ('sent' in auth) return auth.sent;
  return userJson(ctx, auth.user, auth.user);
};

const apiProject: PageHandler = (req, reply, m, ctx) => {
  const refused = jsonOnly(m, reply);
  if (refused) return refused;
  // GitLab lets a CI job read projects with its job token.
  const v: Visitor = visitor(req, ctx, { tokens: true, jobToken: true });
  if (v.kind === 'bad-token') return unauthorized(reply);
  if (v.kind === 'user' && !hasScope(v, ['api', 'read_api']))
    return insufficientScope(reply, ['api', 'read_api']);
  const project = projectByApiId(ctx.model, m.params.id as string);
  if (!project) return notFound(reply, 'Project');
  const owner = ctx.model.cellOfProject(project).name;
  if (owner !== ctx.cell) {
    if (!ctx.model.seed000Routing()) return notFound(reply, 'Project');
    return notMine(reply, owner, `The project ${ctx.model.fullPath(project)} is served by cell ${owner}.`);
  }
  if (!canView(ctx, v.kind === 'user' ? v.user : undefined, project)) return notFound(reply, 'Project');
  const ns = ctx.model.namespaceOf(project);
  const path = ctx.model.fullPath(project);
  return {
    id: project.id,
    name: project.name,
    name_with_namespace: `${ns.name} / ${project.name}`,
    path: project.path,
    path_with_namespace: path,
    default_branch: project.defaultBranch,
    visibility: project.visibility,
    web_url: `${ctx.model.externalUrl}/${path}`,
    namespace: { id: ns.id, name: ns.name, path: ns.path, kind: ns.kind, full_path: ns.path },
  };
};

/** Validates `{name, scopes, expires_at}` and mints a PAT for `owner`; Grape's 400 `{error}` on bad input. */
function createPat(req: FastifyRequest, reply: FastifyReply, ctx: CellContext, owner: TopologyUser) {
  const b = body(req);
  const missing = ['name', 'scopes'].filter((k) => b[k] === undefined || b[k] === '');
  if (missing.length > 0) return badRequest(reply, missing.map((k) => `${k} is missing`).join(', '));
  const scopes = typeof b.scopes === 'string' ? b.scopes.split(',') : b.scopes;
  if (typeof b.name !== 'string') return badRequest(reply, 'name is invalid');
  if (
    !Array.isArray(scopes) ||
    scopes.length === 0 ||
    scopes.some((s) => !(PAT_SCOPES as readonly unknown[]).includes(s))
  ) {
    return badRequest(reply, 'scopes does not have a valid value');
  }
  const expiresAt = b.expires_at ?? null;
  if (expiresAt !== null && (typeof expiresAt !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(expiresAt))) {
    return badRequest(reply, 'expires_at is invalid');
  }
  const org = ctx.model.defaultOrganizationOf(owner);
  const { token, record } = ctx.tokens.mintPat(
    {
      name: b.name,
      userId: owner.id,
      scopes: [...new Set(scopes as PatScope[])],
      expiresAt,
      cellId: ctx.cellId,
    },
    org.id,
  );
  req.log.info({ user: owner.username, patId: record.id }, 'personal access token created');
  return reply.code(201).send({
    id: record.id,
    name: record.name,
    revoked: false,
    created_at: record.createdAt,
    description: null,
    scopes: record.scopes,
    user_id: record.userId,
    last_used_at: null,
    active: true,
    expires_at: record.expiresAt,
    token,
  });
}

/** `POST /user/personal_access_tokens`: for the caller (the mock allows any scope GitLab knows). */
const selfPat: PageHandler = (req, reply, m, ctx) => {
  const refused = jsonOnly(m, reply);
  if (refused) return refused;
  const auth = apiUser(req, reply, ctx, ['api']);
  if ('sent' in auth) return auth.sent;
  return createPat(req, reply, ctx, auth.user);
};

/** `POST /users/:user_id/personal_access_tokens`: administrators only. */
const userPat: PageHandler = (req, reply, m, ctx) => {
  const refused = jsonOnly(m, reply);
  if (refused) return refused;
  const auth = apiUser(req, reply, ctx, ['api']);
  if ('sent' in auth) return auth.sent;
  if (auth.user.admin !== true) return forbidden(reply);
  const id = m.params.user_id as string;
  const owner = /^\d+$/.test(id) ? ctx.model.userById(Number(id)) : undefined;
  if (!owner) return notFound(reply, 'User');
  return createPat(req, reply, ctx, owner);
};

function positiveInt(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** `POST /user/runners` (GitLab ≥ 15.10): a group or project runner and its routable `glrt-` token. */
const createRunner: PageHandler = (req, reply, m, ctx) => {
  const refused = jsonOnly(m, reply);
  if (refused) return refused;
  const auth = apiUser(req, reply, ctx, ['create_runner', 'api']);
  if ('sent' in auth) return auth.sent;
  const b = body(req);
  const runnerType = b.runner_type;
  if (typeof runnerType !== 'string' || !(runnerType in RUNNER_TYPES)) {
    return badRequest(reply, 'runner_type does not have a valid value');
  }
  if (runnerType === 'instance_type') {
    return badRequest(
      reply,
      'instance_type runners get no routable token; the mock cell creates group and project runners only',
    );
  }
  const isGroup = runnerType === 'group_type';
  const key = isGroup ? 'group_id' : 'project_id';
  const ownerId = positiveInt(b[key]);
  if (ownerId === undefined) return badRequest(reply, `${key} is missing`);
  let orgId: number;
  if (isGroup) {
    const ns = ctx.model.namespaceById(ownerId);
    if (ns?.kind !== 'group') return notFound(reply, 'Group');
    const cell = ctx.model.cellOfNamespace(ns).name;
    if (cell !== ctx.cell && !ctx.model.seed000Routing()) return notFound(reply, 'Group');
    if (cell !== ctx.cell) return notMine(reply, cell, `The group ${ns.path} is served by cell ${cell}.`);
    const level =
      auth.user.admin === true ? AccessLevel.owner : ctx.model.namespaceAccessLevel(auth.user, ns.path);
    if (level < AccessLevel.owner) return forbidden(reply);
    orgId = ctx.model.organizationOf(ns).id;
  } else {
    const project = ctx.model.projectById(ownerId);
    if (!project || !canView(ctx, auth.user, project)) return notFound(reply, 'Project');
    const cell = ctx.model.cellOfProject(project).name;
    const path = ctx.model.fullPath(project);
    if (cell !== ctx.cell && !ctx.model.seed000Routing()) return notFound(reply, 'Project');
    if (cell !== ctx.cell) return notMine(reply, cell, `The project ${path} is served by cell ${cell}.`);
    if (effectiveLevel(ctx.model, { user: auth.user }, project) < AccessLevel.maintainer)
      return forbidden(reply);
    orgId = ctx.model.organizationOf(ctx.model.namespaceOf(project)).id;
  }
  const { token, record } = ctx.tokens.mintRunner({
    runnerType: runnerType as RunnerType,
    ownerId,
    organizationId: orgId,
    creatorId: auth.user.id,
    description: typeof b.description === 'string' ? b.description : '',
    cellId: ctx.cellId,
  });
  req.log.info({ runnerId: record.id, runnerType, user: auth.user.username }, 'runner created');
  return reply.code(201).send({ id: record.id, token, token_expires_at: null });
};

/** `POST /runners/verify`: the runner token from the `Runner-Token` header or the `token` field. */
const verifyRunner: PageHandler = (req, reply, m, ctx) => {
  const refused = jsonOnly(m, reply);
  if (refused) return refused;
  const header = req.headers['runner-token'];
  const token = typeof header === 'string' ? header : body(req).token;
  const record = typeof token === 'string' ? ctx.tokens.lookup(token) : undefined;
  // Runners are registered per cell: another cell's runner is as unknown here as a bad token.
  if (record?.kind !== 'runner' || record.cellId !== ctx.cellId) return forbidden(reply);
  return { id: record.id, token, token_expires_at: null };
};

export const API_HANDLERS = {
  api_user: apiUserHandler,
  api_project: apiProject,
  api_user_personal_access_tokens: selfPat,
  api_users_personal_access_tokens: userPat,
  api_user_runners: createRunner,
  api_runners_verify: verifyRunner,
} satisfies Record<string, PageHandler>;
