import type { CellContext } from '../context.js';
import { esc, list } from './html.js';
import type { Visitor } from './identity.js';
import { type PageHandler, sessionVisitor, userOf } from './page-handler.js';
import { canView, projectLink } from './project-view.js';
import { notFound, render, signInRedirect } from './respond.js';

/**
 * The pages outside any namespace or organization: `/` and the global dashboard (which send a user
 * of a non-legacy cell's organization to the organization's dashboard), the admin area, the profile.
 */

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

export const GLOBAL_PAGES = {
  profile,
  root,
  dashboard,
  admin,
} satisfies Record<string, PageHandler>;
