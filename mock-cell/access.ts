import { join } from 'node:path';
import { GIT_ACTIONS, type GitAction } from '../lib/contracts/internal-api.js';
import { normalizeProjectPath, resolveInStorage } from '../lib/repo-path.js';
import { ANY_CHANGES, branchName, isZeroSha, type RefChange } from './changes.js';
import { BadRequest, GitFailed } from './errors.js';
import type { GitInspector, ObjectDirs } from './git.js';
import type { Actor } from './identity.js';
import type { TopologyModel } from './topology.js';
import { AccessLevel, type ProtectedBranch, type TopologyProject } from './topology-types.js';

/**
 * GitLab's git access check, shared by `/allowed` and Workhorse pre-authorization. It answers with a
 * decision; each caller renders it with its own statuses (401/404 JSON for `/allowed`, 403/404 text
 * for pre-authorization, 421 for a project another cell owns).
 */

/** GitLab's wording (lib/gitlab/git_access.rb, lib/gitlab/checks/branch_check.rb). */
export const AccessMessages = {
  projectNotFound:
    "The project you were looking for could not be found or you don't have permission to view it.",
  commandNotAllowed: "The command you're trying to execute is not allowed.",
  download: 'You are not allowed to download code from this project.',
  pushCode: 'You are not allowed to push code to this project.',
  deleteDefaultBranch: 'The default branch of a project cannot be deleted.',
  hexBranchName: 'You cannot create a branch with a 40-character hexadecimal branch name.',
  forcePushProtectedBranch: 'You are not allowed to force push code to a protected branch on this project.',
  createProtectedBranch: 'You are not allowed to create protected branches on this project.',
  deleteProtectedBranch:
    'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
  deleteProtectedBranchNonWeb: 'You can only delete protected branches using the web interface.',
  pushProtectedBranch: 'You are not allowed to push code to protected branches on this project.',
} as const;

/** The project named by a repository path (`/ns/p.git`, `ns/p`) or by `gl_repository` (`project-<id>`). */
export type ProjectRef = { path: string } | { glRepository: string };

export interface AccessRequest {
  /** The cell answering; a project owned by another cell is "misdirected". */
  cell: string;
  action: string;
  actor: Actor;
  project: ProjectRef;
  changes: RefChange[] | typeof ANY_CHANGES;
  /** Quarantine object directory relative to the repository (Gitaly hooks' GIT_OBJECT_DIRECTORY_RELATIVE). */
  objectDirectoryRelative?: string | undefined;
}

export type AccessDecision =
  | { outcome: 'allowed'; project: TopologyProject }
  | { outcome: 'forbidden'; message: string }
  | { outcome: 'not-found'; message: string }
  | { outcome: 'misdirected'; cell: string; message: string };

export function findProject(model: TopologyModel, ref: ProjectRef): TopologyProject | undefined {
  if ('glRepository' in ref) {
    const m = /^project-(\d+)$/.exec(ref.glRepository);
    return m ? model.projectById(Number(m[1])) : undefined;
  }
  const path = normalizeProjectPath(ref.path);
  return path === undefined ? undefined : model.projectByPath(path);
}

function isGitAction(action: string): action is GitAction {
  return (GIT_ACTIONS as readonly string[]).includes(action);
}

/** The actor's effective access level in the project: admins count as owners. */
export function effectiveLevel(model: TopologyModel, actor: Actor, project: TopologyProject): number {
  return actor.user.admin === true ? AccessLevel.owner : model.projectAccessLevel(actor.user, project);
}

/** Read access of a signed-in user at `level` (anonymous visitors read public projects only). */
export function canRead(project: TopologyProject, level: number): boolean {
  return project.visibility !== 'private' || level >= AccessLevel.guest;
}

function canDownload(project: TopologyProject, level: number): boolean {
  return project.visibility !== 'private' || level >= AccessLevel.reporter;
}

/** A protected-branch name or pattern; `*` matches any run of characters, `/` included. */
export function matchesBranch(pattern: string, branch: string): boolean {
  if (!pattern.includes('*')) return pattern === branch;
  const re = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*?');
  return new RegExp(`^${re}$`).test(branch);
}

function canPushTo(rules: readonly ProtectedBranch[], level: number): boolean {
  return rules.some((r) => r.pushAccessLevel > 0 && level >= r.pushAccessLevel);
}

const forbidden = (message: string): AccessDecision => ({ outcome: 'forbidden', message });

export class AccessChecker {
  constructor(
    private readonly model: TopologyModel,
    private readonly git: GitInspector,
  ) {}

  async check(req: AccessRequest): Promise<AccessDecision> {
    if (!isGitAction(req.action)) return forbidden(AccessMessages.commandNotAllowed);
    const project = findProject(this.model, req.project);
    if (!project) return { outcome: 'not-found', message: AccessMessages.projectNotFound };
    const owner = this.model.cellOfProject(project);
    if (owner.name !== req.cell) {
      // Without seed 000's signals a cell knows nothing of another cell's project (GitLab has no 421).
      if (!this.model.seed000Routing())
        return { outcome: 'not-found', message: AccessMessages.projectNotFound };
      return {
        outcome: 'misdirected',
        cell: owner.name,
        message: `The project ${this.model.fullPath(project)} is served by cell ${owner.name}.`,
      };
    }
    const level = effectiveLevel(this.model, req.actor, project);
    if (!canRead(project, level)) return { outcome: 'not-found', message: AccessMessages.projectNotFound };
    if (req.action !== 'git-receive-pack') {
      return canDownload(project, level)
        ? { outcome: 'allowed', project }
        : forbidden(AccessMessages.download);
    }
    if (level < AccessLevel.developer) return forbidden(AccessMessages.pushCode);
    if (req.changes !== ANY_CHANGES) {
      for (const change of req.changes) {
        const message = await this.checkChange(project, level, change, req.objectDirectoryRelative);
        if (message) return forbidden(message);
      }
    }
    return { outcome: 'allowed', project };
  }

  /** GitLab's branch check for one ref update; returns the denial message or undefined. Tags and other refs pass. */
  private async checkChange(
    project: TopologyProject,
    level: number,
    change: RefChange,
    objectDirectoryRelative: string | undefined,
  ): Promise<string | undefined> {
    const branch = branchName(change.ref);
    if (branch === undefined) return undefined;
    const deletion = isZeroSha(change.newrev);
    const creation = isZeroSha(change.oldrev);
    if (deletion && branch === project.defaultBranch) return AccessMessages.deleteDefaultBranch;
    if (!deletion && /^[0-9a-fA-F]{40}(-\/|\/|$)/.test(branch)) return AccessMessages.hexBranchName;
    const rules = project.protectedBranches.filter((r) => matchesBranch(r.name, branch));
    if (rules.length === 0) return undefined;
    if (!creation && !deletion && !rules.some((r) => r.allowForcePush)) {
      if (await this.isForcePush(project, change, objectDirectoryRelative)) {
        return AccessMessages.forcePushProtectedBranch;
      }
    }
    if (creation) return canPushTo(rules, level) ? undefined : AccessMessages.createProtectedBranch;
    if (deletion) {
      return level < AccessLevel.maintainer
        ? AccessMessages.deleteProtectedBranch
        : AccessMessages.deleteProtectedBranchNonWeb;
    }
    return canPushTo(rules, level) ? undefined : AccessMessages.pushProtectedBranch;
  }

  /** An update is forced when the old commit is not an ancestor of the new one. */
  private async isForcePush(
    project: TopologyProject,
    change: RefChange,
    objectDirectoryRelative: string | undefined,
  ): Promise<boolean> {
    const repoDir = this.model.repositoryDir(project);
    if (repoDir === undefined)
      throw GitFailed(`no repository folder for project ${this.model.fullPath(project)}`);
    let dirs: ObjectDirs | undefined;
    if (objectDirectoryRelative !== undefined && objectDirectoryRelative !== '') {
      const objectDirectory = resolveInStorage(repoDir, objectDirectoryRelative);
      if (objectDirectory === undefined) {
        throw BadRequest(
          `env: GIT_OBJECT_DIRECTORY_RELATIVE ${JSON.stringify(objectDirectoryRelative)} leaves the repository`,
        );
      }
      dirs = { objectDirectory, alternateDirectories: [join(repoDir, 'objects')] };
    }
    return !(await this.git.isAncestor(repoDir, change.oldrev, change.newrev, dirs));
  }
}
