import { canRead, effectiveLevel } from '../access.js';
import type { CellContext } from '../context.js';
import type { TopologyOrganization, TopologyProject, TopologyUser } from '../topology-types.js';
import { esc } from './html.js';
import type { Visitor } from './identity.js';
import { userOf } from './page-handler.js';

/** Which projects a visitor sees, and how a project is shown: its name, a link, its JSON. */

/** Projects a visitor may see: public ones, or those a signed-in user can read. */
export function canView(ctx: CellContext, user: TopologyUser | undefined, project: TopologyProject): boolean {
  if (project.visibility === 'public') return true;
  if (!user) return false;
  return canRead(project, effectiveLevel(ctx.model, { user }, project));
}

export function projectLink(ctx: CellContext, project: TopologyProject): string {
  const path = ctx.model.fullPath(project);
  return `<a href="/${esc(path)}">${esc(fullName(ctx, project))}</a> (${esc(project.visibility)})`;
}

export function fullName(ctx: CellContext, project: TopologyProject): string {
  return `${ctx.model.namespaceOf(project).name} / ${project.name}`;
}

export function projectJson(ctx: CellContext, project: TopologyProject) {
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

/** The projects of an organization's namespaces that the visitor may see. */
export function orgProjects(ctx: CellContext, org: TopologyOrganization, v: Visitor): TopologyProject[] {
  const namespaces = new Set(ctx.model.namespacesOf(org).map((n) => n.path.toLowerCase()));
  return ctx.model
    .projects()
    .filter((p) => namespaces.has(p.namespace.toLowerCase()) && canView(ctx, userOf(v), p));
}
