import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TopologyProject, TopologyUser } from '../topology-types.js';

/**
 * CI job tokens and deploy tokens of the mock, derived from the topology alone so that tests and the
 * demo can compute them without any store: one job token per (project, user) — a job that user runs
 * in that project — and one read-only deploy token per project. Not secrets: anyone who knows the
 * topology can compute them, which is fine for a mock and wrong for anything else.
 */

const KEY = 'gitlab-cells mock-cell derived tokens v1';

function mac(label: string): string {
  return createHmac('sha256', KEY).update(label).digest('base64url').slice(0, 20);
}

/** GitLab's CI job token prefix. */
export const JOB_TOKEN_PREFIX = 'glcbt-';
/** GitLab's deploy token prefix. */
export const DEPLOY_TOKEN_PREFIX = 'gldt-';
/** The login `git` must send with a job token. */
export const CI_JOB_USER = 'gitlab-ci-token';

/** A deterministic job id of the job `user` runs in `project` (GlBuildID). */
export function jobId(project: TopologyProject, user: TopologyUser): number {
  return project.id * 100_000 + user.id;
}

export function jobToken(project: TopologyProject, user: TopologyUser): string {
  return `${JOB_TOKEN_PREFIX}${jobId(project, user).toString(16)}_${mac(`job:${project.id}:${user.id}`)}`;
}

/** Deploy token `gitlab+deploy-token-<project id>` of a project, scope `read_repository`. */
export function deployToken(project: TopologyProject): { username: string; token: string } {
  return {
    username: `gitlab+deploy-token-${project.id}`,
    token: `${DEPLOY_TOKEN_PREFIX}${mac(`deploy:${project.id}`)}`,
  };
}

/**
 * The LFS token `git-lfs-authenticate` hands out for a user (Rails' `Gitlab::LfsToken`), accepted
 * as the Basic password with that username on LFS paths.
 */
export function lfsToken(user: TopologyUser): string {
  // 40 hex characters, as the random token it stands for.
  return createHmac('sha256', KEY).update(`lfs:${user.id}`).digest('hex').slice(0, 40);
}

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
