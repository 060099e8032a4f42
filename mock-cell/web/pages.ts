import type { FastifyReply, FastifyRequest } from 'fastify';
import { canRead, effectiveLevel } from '../access.js';
import type { CellContext } from '../context.js';
import type { RouteMatch } from '../routing/table.js';
import type { TopologyOrganization, TopologyProject, TopologyUser } from '../topology-types.js';
import { esc, list } from './html.js';
import { type Visitor, visitor } from './identity.js';
import { notFound, notMine, render, signInRedirect } from './respond.js';

/**
 * The HTML pages of seed 000's request flows. Pages authenticate by session only (as GitLab's web
 * UI); a cell serves the pages of what it owns and answers the "not mine" signal (421) for pages of
 * another cell's namespace or organization.
 */

export type PageHandler = (
  req: FastifyRequest,
  reply: FastifyReply,
  m: RouteMatch,
  ctx: CellContext,
) => Promise<unknown> | unknown;

function sessionVisitor(req: FastifyRequest, ctx: CellContext): Visitor {
  return visitor(req, ctx, { tokens: false });
}

/** Projects a visitor may see: public ones, or those a signed-in user can read. */
export function canView(ctx: CellContext, user: TopologyUser | undefined, project: TopologyProject): boolean {
  if (project.visibility === 'public') return true;
  if (!user) return false;
  return canRead(project, effectiveLevel(ctx.model, { user }, project));
}

const userOf = (v: Visitor): TopologyUser | undefined => (v.kind === 'user' ? v.user : undefined);

function projectLink(ctx: CellContext, project: TopologyProject): string {
  const path = ctx.model.fullPath(project);
  return `<a href="/${esc(path)}">${esc(fullName(ctx, project))}</a> (${esc(project.visibility)})`;
}

function fullName(ctx: CellContext, project: TopologyProject): string {
  return `${ctx.model.namespaceOf(project).name} / ${project.name}`;
}

function projectJson(ctx: CellContext, project: TopologyProject) {
  const path = ctx.model.fullPath(project);
  return {
    id: project.id,
    name: project.name,
    name_with_namespace: fullName(ctx, project),
    path: project.path,
    path_with_namespace: path,
    visibility: project.visibility,
    default_branch: project.defaultBranch,
    web_url: `${ctx.model.externalUrl}/${path}`,
    cell: ctx.cell,
  };
}

function orgProjects(ctx: CellContext, org: TopologyOrganization, v: Visitor): TopologyProject[] {
  const namespaces = new Set(ctx.model.namespacesOf(org).map((n) => n.path.toLowerCase()));
  return ctx.model
    .projects()
    .filter((p) => namespaces.has(p.namespace.toLowerCase()) && canView(ctx, userOf(v), p));
}

/** Why a scoped page is not rendered: unknown or invisible, another cell's, or sign in first. */
type Refusal =
  | { outcome: 'not-found' }
  | { outcome: 'misdirected'; cell: string; message: string }
  | { outcome: 'sign-in' };

function refuse(req: FastifyRequest, reply: FastifyReply, m: RouteMatch, ctx: CellContext, r: Refusal) {
  switch (r.outcome) {
    case 'not-found':
      return notFound(reply, ctx, m);
    case 'misdirected':
      return notMine(reply, r.cell, r.message);
    case 'sign-in':
      return signInRedirect(req, reply);
  }
}

/**
 * The project of a namespace-scoped page: 404 when unknown or not visible (a signed-out visitor is
 * asked to sign in instead), 421 when another cell owns the namespace.
 */
function locateProject(
  req: FastifyRequest,
  m: RouteMatch,
  ctx: CellContext,
  projectPath: string,
): { outcome: 'ok'; project: TopologyProject } | Refusal {
  const namespacePath = m.params.namespace_id as string;
  const ns = ctx.model.namespace(namespacePath.split('/')[0] as string);
  if (!ns) return { outcome: 'not-found' };
  const owner = ctx.model.cellOfNamespace(ns).name;
  if (owner !== ctx.cell) {
    return {
      outcome: 'misdirected',
      cell: owner,
      message: `The namespace ${ns.path} is served by cell ${owner}.`,
    };
  }
  const project = namespacePath.includes('/')
    ? undefined
    : ctx.model.projectByPath(`${ns.path}/${projectPath}`);
  const v = sessionVisitor(req, ctx);
  if (project && canView(ctx, userOf(v), project)) return { outcome: 'ok', project };
  return project && v.kind === 'anonymous' ? { outcome: 'sign-in' } : { outcome: 'not-found' };
}

const project: PageHandler = (req, reply, m, ctx) => {
  const found = locateProject(req, m, ctx, m.params.project_id as string);
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  const p = found.project;
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: fullName(ctx, p),
      page: 'projects:show',
      body: [
        `<h1>${esc(fullName(ctx, p))} · ${esc(ctx.cell)}</h1>`,
        `<p>Visibility: ${esc(p.visibility)}. Default branch: ${esc(p.defaultBranch)}.</p>`,
        `<p><a href="/${esc(ctx.model.fullPath(p))}/-/issues">Issues</a></p>`,
      ].join('\n'),
    }),
    json: () => projectJson(ctx, p),
  });
};

const projectIssues: PageHandler = (req, reply, m, ctx) => {
  const found = locateProject(req, m, ctx, m.params.project_id as string);
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  const p = found.project;
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: `Issues · ${fullName(ctx, p)}`,
      page: 'projects:issues:index',
      body: `<h1>Issues · ${esc(fullName(ctx, p))} · ${esc(ctx.cell)}</h1>\n<p>There are no issues to show.</p>`,
    }),
    json: () => [],
  });
};

/** The mock has no issues: a visible project answers 404 for every issue. */
const projectIssue: PageHandler = (req, reply, m, ctx) => {
  const found = locateProject(req, m, ctx, m.params.project_id as string);
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  return notFound(reply, ctx, m);
};

/** `/<ns>/<project>.git` → the project page, as GitLab redirects it. */
const repository: PageHandler = (req, reply, m, ctx) => {
  const found = locateProject(req, m, ctx, (m.params.repository_path as string).slice(0, -4));
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  return reply.redirect(`/${ctx.model.fullPath(found.project)}`, 302);
};

/** Smart HTTP is not served (the cell's bridge serves Git over SSH tunnels only). */
const gitHttp: PageHandler = (req, reply, m, ctx) => {
  const found = locateProject(req, m, ctx, (m.params.repository_path as string).slice(0, -4));
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  return reply
    .code(403)
    .type('text/plain; charset=utf-8')
    .send('Git over HTTP is not served by this mock cell; clone over SSH.');
};

const namespace: PageHandler = (req, reply, m, ctx) => {
  const id = m.params.id as string;
  const ns = ctx.model.namespace(id.split('/')[0] as string);
  if (!ns) return notFound(reply, ctx, m);
  const owner = ctx.model.cellOfNamespace(ns).name;
  if (owner !== ctx.cell)
    return notMine(reply, owner, `The namespace ${ns.path} is served by cell ${owner}.`);
  if (id.includes('/')) return notFound(reply, ctx, m);
  const v = sessionVisitor(req, ctx);
  const projects = ctx.model
    .projects()
    .filter((p) => p.namespace.toLowerCase() === ns.path.toLowerCase() && canView(ctx, userOf(v), p));
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: ns.name,
      page: ns.kind === 'group' ? 'groups:show' : 'users:show',
      body: `<h1>${esc(ns.name)} · ${esc(ctx.cell)}</h1>\n${list(projects.map((p) => projectLink(ctx, p)))}`,
    }),
    json: () => ({ id: ns.id, name: ns.name, path: ns.path, kind: ns.kind, cell: ctx.cell }),
  });
};

/** The organization of an organization-scoped page: 404 when unknown, 421 when another cell's. */
function locateOrganization(
  m: RouteMatch,
  ctx: CellContext,
): { outcome: 'ok'; org: TopologyOrganization } | Refusal {
  const org = ctx.model.organization(m.params.organization_path as string);
  if (!org) return { outcome: 'not-found' };
  if (org.cell !== ctx.cell) {
    return {
      outcome: 'misdirected',
      cell: org.cell,
      message: `The organization ${org.path} is served by cell ${org.cell}.`,
    };
  }
  return { outcome: 'ok', org };
}

const organization: PageHandler = (req, reply, m, ctx) => {
  const found = locateOrganization(m, ctx);
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  const org = found.org;
  const namespaces = ctx.model.namespacesOf(org).filter((n) => n.kind === 'group');
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: org.name,
      page: 'organizations:organizations:show',
      body: `<h1>${esc(org.name)} · ${esc(ctx.cell)}</h1>\n${list(namespaces.map((n) => `<a href="/${esc(n.path)}">${esc(n.name)}</a>`))}`,
    }),
    json: () => ({ id: org.id, name: org.name, path: org.path, cell: ctx.cell }),
  });
};

const organizationProjects: PageHandler = (req, reply, m, ctx) => {
  const found = locateOrganization(m, ctx);
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  const org = found.org;
  const projects = orgProjects(ctx, org, sessionVisitor(req, ctx));
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: `Projects · ${org.name}`,
      page: 'organizations:organizations:projects',
      body: `<h1>${esc(org.name)} projects · ${esc(ctx.cell)}</h1>\n${list(projects.map((p) => projectLink(ctx, p)))}`,
    }),
    json: () => projects.map((p) => projectJson(ctx, p)),
  });
};

/** Seed 000: the dashboard of the user's default organization, scoped to it. */
const organizationDashboard: PageHandler = (req, reply, m, ctx) => {
  const found = locateOrganization(m, ctx);
  if (found.outcome !== 'ok') return refuse(req, reply, m, ctx, found);
  const org = found.org;
  const v = sessionVisitor(req, ctx);
  if (v.kind === 'anonymous') return signInRedirect(req, reply);
  if (v.kind !== 'user') return notFound(reply, ctx, m);
  const projects = orgProjects(ctx, org, v);
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: `Dashboard · ${org.name}`,
      page: 'organizations:dashboard',
      body: `<h1>${esc(org.name)} dashboard · ${esc(ctx.cell)}</h1>\n<p>Signed in as ${esc(v.user.username)}.</p>\n${list(projects.map((p) => projectLink(ctx, p)))}`,
    }),
  });
};

/** Where `/` and `/dashboard` send a user: the global dashboard for legacy users, else their organization's. */
function homeOf(ctx: CellContext, v: Extract<Visitor, { kind: 'user' }>): string | undefined {
  const org = ctx.model.defaultOrganizationOf(v.user);
  return ctx.model.cellOfOrganization(org).legacy === true
    ? undefined
    : `/organizations/${org.path}/-/dashboard`;
}

const root: PageHandler = (req, reply, _m, ctx) => {
  const v = sessionVisitor(req, ctx);
  if (v.kind !== 'user') return reply.redirect('/users/sign_in', 302);
  return reply.redirect(homeOf(ctx, v) ?? '/dashboard', 302);
};

/** The global dashboard: only users of an organization of the legacy cell see it (seed 000). */
const dashboard: PageHandler = (req, reply, m, ctx) => {
  const v = sessionVisitor(req, ctx);
  if (v.kind !== 'user') return signInRedirect(req, reply);
  const home = homeOf(ctx, v);
  if (home !== undefined) return reply.redirect(home, 302);
  const projects = ctx.model
    .projects()
    .filter((p) => ctx.model.cellOfProject(p).name === ctx.cell && canView(ctx, userOf(v), p));
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: 'Dashboard',
      page: 'dashboard:projects:index',
      body: `<h1>Dashboard · ${esc(ctx.cell)}</h1>\n<p>Signed in as ${esc(v.user.username)}.</p>\n${list(projects.map((p) => projectLink(ctx, p)))}`,
    }),
  });
};

/** `/admin` exists only on the legacy cell, for administrators. */
const admin: PageHandler = (req, reply, m, ctx) => {
  if (ctx.model.cell(ctx.cell)?.legacy !== true) return notFound(reply, ctx, m);
  const v = sessionVisitor(req, ctx);
  if (v.kind === 'anonymous') return signInRedirect(req, reply);
  if (v.kind !== 'user' || v.user.admin !== true) return notFound(reply, ctx, m);
  const rows = ctx.model
    .cells()
    .map(
      (c) =>
        `<tr><td>${c.id}</td><td>${esc(c.name)}</td><td>${esc(c.region)}</td><td>${c.legacy === true ? 'legacy' : ''}</td></tr>`,
    );
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: 'Admin Area',
      page: 'admin:dashboard:index',
      body: `<h1>Admin Area · ${esc(ctx.cell)}</h1>\n<table>\n<tr><th>id</th><th>cell</th><th>region</th><th></th></tr>\n${rows.join('\n')}\n</table>`,
    }),
  });
};

/** The signed-in user's profile (the seed's exact fixed route `/-/profile`). */
const profile: PageHandler = (req, reply, m, ctx) => {
  const v = sessionVisitor(req, ctx);
  if (v.kind === 'anonymous') return signInRedirect(req, reply);
  if (v.kind !== 'user') return notFound(reply, ctx, m);
  const org = ctx.model.defaultOrganizationOf(v.user);
  return render(reply, ctx, m, 200, {
    html: () => ({
      title: 'Profile',
      page: 'profiles:show',
      body: `<h1>Profile · ${esc(v.user.username)} · ${esc(ctx.cell)}</h1>\n<p>Default organization: ${esc(org.name)}.</p>`,
    }),
    json: () => ({ id: v.user.id, username: v.user.username, default_organization: org.path }),
  });
};

export const PAGE_HANDLERS = {
  profile,
  root,
  dashboard,
  admin,
  organization,
  organization_projects: organizationProjects,
  organization_dashboard: organizationDashboard,
  namespace,
  project,
  project_issues: projectIssues,
  project_issue: projectIssue,
  repository,
  git_info_refs: gitHttp,
  git_upload_pack: gitHttp,
  git_receive_pack: gitHttp,
} satisfies Record<string, PageHandler>;
