import { esc, list } from './html.js';
import { type PageHandler, sessionVisitor, userOf } from './page-handler.js';
import { locateProject, refuse } from './page-scope.js';
import { canView, fullName, projectJson, projectLink } from './project-view.js';
import { notFound, notMine, render } from './respond.js';

/**
 * The pages under a namespace: the namespace (group or user) with its projects, a project with its
 * issues, and the project's repository paths (`.git`, smart HTTP).
 */

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

const namespace: PageHandler = (req, reply, m, ctx) => {
  const id = m.params.id as string;
  const ns = ctx.model.namespace(id.split('/')[0] as string);
  if (!ns) return notFound(reply, ctx, m);
  const owner = ctx.model.cellOfNamespace(ns).name;
  if (owner !== ctx.cell && !ctx.model.seed000Routing()) return notFound(reply, ctx, m);
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

export const NAMESPACE_PAGES = {
  namespace,
  project,
  project_issues: projectIssues,
  project_issue: projectIssue,
  repository,
} satisfies Record<string, PageHandler>;
