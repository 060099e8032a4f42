import { esc, list } from './html.js';
import { type PageHandler, sessionVisitor } from './page-handler.js';
import { locateOrganization, refuse } from './page-scope.js';
import { orgProjects, projectJson, projectLink } from './project-view.js';
import { notFound, render, signInRedirect } from './respond.js';

/** The pages under `/organizations/<path>`: the organization, its projects, its dashboard. */

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

export const ORGANIZATION_PAGES = {
  organization,
  organization_projects: organizationProjects,
  organization_dashboard: organizationDashboard,
} satisfies Record<string, PageHandler>;
