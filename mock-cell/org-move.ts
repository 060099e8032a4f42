import { access, cp, mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { hashedRepoPath, resolveInStorage } from '../lib/repo-path.js';
import { Conflict, RepositoryMoveFailed } from './errors.js';
import type { TopologyModel } from './topology.js';

/**
 * Moving an organization to another cell: every project's bare repository goes from the old cell's
 * storage to the new cell's storage at the same hashed path (rename, or copy + delete across
 * filesystems), then the shared model switches the organization's cell, so every cell of the
 * process sees the move at once and the next clone is served by the new cell. One move at a time
 * per model; a failure puts the repositories already moved back.
 */

export interface MovedRepository {
  project: string;
  relative_path: string;
  /** false when there was nothing to move (no repository yet, or both cells share the folder). */
  moved: boolean;
}

export interface OrganizationMove {
  organization: string;
  from: string;
  to: string;
  repositories: MovedRepository[];
}

const running = new WeakSet<TopologyModel>();

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** rename, or copy + delete when source and target are on different filesystems. */
async function moveDir(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await cp(from, to, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
    await rm(from, { recursive: true, force: true });
  }
}

interface Step {
  project: string;
  relativePath: string;
  from: string;
  to: string;
  move: boolean;
}

export async function moveOrganization(
  model: TopologyModel,
  orgPath: string,
  cellName: string,
): Promise<OrganizationMove> {
  if (running.has(model)) throw Conflict('another organization move is in progress');
  running.add(model);
  try {
    const plan = model.planOrganizationMove(orgPath, cellName);
    const steps: Step[] = [];
    for (const project of plan.projects) {
      const relativePath = hashedRepoPath(project.id);
      const fromRoot = plan.from.gitaly.storages[project.storage];
      const from = fromRoot === undefined ? undefined : resolveInStorage(fromRoot, relativePath);
      const to = resolveInStorage(plan.to.gitaly.storages[project.storage] as string, relativePath) as string;
      const name = model.fullPath(project);
      const move = from !== undefined && from !== to && (await exists(from));
      if (move && (await exists(to))) {
        throw Conflict(`cell ${plan.to.name} already has a repository at ${relativePath} (project ${name})`);
      }
      steps.push({ project: name, relativePath, from: from ?? '', to, move });
    }
    const done: Step[] = [];
    try {
      for (const step of steps.filter((s) => s.move)) {
        await moveDir(step.from, step.to);
        done.push(step);
      }
    } catch (err) {
      await Promise.allSettled(done.map((s) => moveDir(s.to, s.from)));
      throw RepositoryMoveFailed(
        `moving repositories to cell ${plan.to.name} failed: ${(err as Error).message}`,
        err,
      );
    }
    model.moveOrganization(plan.org.path, plan.to.name);
    return {
      organization: plan.org.path,
      from: plan.from.name,
      to: plan.to.name,
      repositories: steps.map((s) => ({ project: s.project, relative_path: s.relativePath, moved: s.move })),
    };
  } finally {
    running.delete(model);
  }
}
