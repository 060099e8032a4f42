import type { CellContext } from '../context.js';
import { isExpired, type PatScope } from '../tokens.js';
import type { TopologyProject, TopologyUser } from '../topology-types.js';
import {
  CI_JOB_USER,
  DEPLOY_TOKEN_PREFIX,
  deployToken,
  JOB_TOKEN_PREFIX,
  jobId,
  jobToken,
  lfsToken,
  sameToken,
} from './derived-tokens.js';

/**
 * Rails' authentication of a Git-over-HTTP client (`Gitlab::Auth.find_for_git_client`), in its
 * order: `gitlab-ci-token` + job token → personal access token in the password (any login, so
 * `oauth2:<token>` too) → (LFS paths) the `git-lfs-authenticate` token → deploy token (login = its username) → username + password. What the
 * credentials may do is a set of abilities, as Rails' `Result#authentication_abilities`.
 */

export type Ability = 'download_code' | 'push_code';

export type GitHttpCredential =
  | { kind: 'user'; user: TopologyUser; abilities: Ability[]; via: 'password' | 'pat' | 'lfs-token' }
  | { kind: 'job'; user: TopologyUser; project: TopologyProject; abilities: Ability[]; buildId: number }
  | { kind: 'deploy-token'; project: TopologyProject; username: string; abilities: Ability[] };

/** Rails' `abilities_for_scopes` for the repository: `api` is full access, `read_api` none here. */
function abilitiesForScopes(scopes: readonly PatScope[]): Ability[] {
  const out = new Set<Ability>();
  for (const scope of scopes) {
    if (scope === 'read_repository') out.add('download_code');
    if (scope === 'write_repository' || scope === 'api') {
      out.add('download_code');
      out.add('push_code');
    }
  }
  return [...out];
}

/** `Authorization: Basic` → login and password; undefined when absent or malformed. */
export function basicCredentials(
  header: string | undefined,
): { login: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon === -1) return undefined;
  return { login: text.slice(0, colon), password: text.slice(colon + 1) };
}

function jobCredential(ctx: CellContext, project: TopologyProject | undefined, password: string) {
  if (!project || !password.startsWith(JOB_TOKEN_PREFIX)) return undefined;
  for (const user of ctx.model.users()) {
    if (sameToken(jobToken(project, user), password)) {
      // A job token downloads from its project (Rails' build abilities: download_code, build_*).
      const abilities: Ability[] = ['download_code'];
      return { kind: 'job' as const, user, project, abilities, buildId: jobId(project, user) };
    }
  }
  return undefined;
}

function patCredential(ctx: CellContext, password: string): GitHttpCredential | undefined {
  const record = ctx.tokens.lookup(password);
  if (record?.kind !== 'pat' || isExpired(record)) return undefined;
  const user = ctx.model.userById(record.userId);
  return user ? { kind: 'user', user, abilities: abilitiesForScopes(record.scopes), via: 'pat' } : undefined;
}

function deployCredential(project: TopologyProject | undefined, login: string, password: string) {
  if (!project || !password.startsWith(DEPLOY_TOKEN_PREFIX)) return undefined;
  const deploy = deployToken(project);
  if (deploy.username !== login || !sameToken(deploy.token, password)) return undefined;
  const abilities: Ability[] = ['download_code'];
  return { kind: 'deploy-token' as const, project, username: deploy.username, abilities };
}

/** The credential Rails finds for `login:password` on `project` (undefined: 401). */
export function findForGitClient(
  ctx: CellContext,
  login: string,
  password: string,
  project: TopologyProject | undefined,
  lfs = false,
): GitHttpCredential | undefined {
  if (login === CI_JOB_USER) return jobCredential(ctx, project, password);
  if (lfs) {
    const user = ctx.model.userByUsername(login);
    if (user && sameToken(lfsToken(user), password))
      return { kind: 'user', user, abilities: ['download_code', 'push_code'], via: 'lfs-token' };
  }
  const pat = patCredential(ctx, password);
  if (pat) return pat;
  const deploy = deployCredential(project, login, password);
  if (deploy) return deploy;
  const user = ctx.model.userByUsername(login);
  if (user && password !== '' && sameToken(user.password, password)) {
    return { kind: 'user', user, abilities: ['download_code', 'push_code'], via: 'password' };
  }
  return undefined;
}
