/** @file The route table of a cell (its pages, API and internal API) as data; `table.ts` compiles and matches it. */

/**
 * The mock cell's route table, in Rails' order (first match wins). It drives three things, so they
 * cannot drift apart: the page/API dispatcher, `cells/learn` (who owns a path) and the route
 * snapshot. Routes marked `fastify` are the internal API, registered as Fastify routes (a test
 * checks both lists agree).
 */

/** The names of GitLab's path constraints (`PATH_PATTERNS` of `table.ts`). */
export type PathPatternName = 'namespace' | 'project' | 'repository' | 'segment' | 'version';

export type Verb = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Who owns the requests of a route, for `cells/learn`. */
export type Owner =
  /** The cell of the top-level namespace: the first segment of `param`. */
  | { by: 'namespace'; param: string }
  | { by: 'organization'; param: string }
  /** The cell of the project `param` names: numeric id or URL-encoded full path (API `:id`). */
  | { by: 'project'; param: string }
  /** Pinned to the legacy cell. */
  | { by: 'legacy' }
  /** Any cell can answer; which one should depends on the session or token, not on the path. */
  | { by: 'session' };

export interface RouteDef {
  /** Stable name; page routes are dispatched to the handler of this name. */
  name: string;
  verb: Verb;
  spec: string;
  owner: Owner;
  /** Extra parameter constraints (names of PATH_PATTERNS entries) for this route only. */
  constraints?: Readonly<Record<string, PathPatternName>>;
  /** `pages`: the dispatcher of this cell; `fastify`: a Fastify route of the internal API. */
  served: 'pages' | 'fastify';
  /** Test-only routes are left out of the route snapshot, as GitLab's generator does. */
  testOnly?: true;
}

const namespace = (param: string): Owner => ({ by: 'namespace', param });
const organization: Owner = { by: 'organization', param: 'organization_path' };
const session: Owner = { by: 'session' };

const PROJECT = '/*namespace_id/:project_id';
const REPOSITORY = '/*namespace_id/:repository_path';

/** Page and API routes of a cell (the dispatcher's), then the internal API (Fastify's). */
export const ROUTES: readonly RouteDef[] = [
  { name: 'root', verb: 'GET', spec: '/', owner: session, served: 'pages' },
  { name: 'dashboard', verb: 'GET', spec: '/dashboard(.:format)', owner: session, served: 'pages' },
  { name: 'admin', verb: 'GET', spec: '/admin(.:format)', owner: { by: 'legacy' }, served: 'pages' },
  { name: 'profile', verb: 'GET', spec: '/-/profile(.:format)', owner: session, served: 'pages' },
  { name: 'sign_in_form', verb: 'GET', spec: '/users/sign_in(.:format)', owner: session, served: 'pages' },
  { name: 'sign_in', verb: 'POST', spec: '/users/sign_in(.:format)', owner: session, served: 'pages' },
  { name: 'sign_out', verb: 'POST', spec: '/users/sign_out(.:format)', owner: session, served: 'pages' },
  {
    name: 'sign_in_path',
    verb: 'GET',
    spec: '/users/sign_in_path(.:format)',
    owner: session,
    served: 'pages',
  },
  {
    name: 'organization_dashboard',
    verb: 'GET',
    spec: '/organizations/:organization_path/-/dashboard(.:format)',
    owner: organization,
    served: 'pages',
  },
  {
    name: 'organization_projects',
    verb: 'GET',
    spec: '/organizations/:organization_path/projects(.:format)',
    owner: organization,
    served: 'pages',
  },
  {
    name: 'organization',
    verb: 'GET',
    spec: '/organizations/:organization_path(.:format)',
    owner: organization,
    served: 'pages',
  },
  { name: 'api_user', verb: 'GET', spec: '/api/:version/user(.:format)', owner: session, served: 'pages' },
  {
    name: 'api_user_personal_access_tokens',
    verb: 'POST',
    spec: '/api/:version/user/personal_access_tokens(.:format)',
    owner: session,
    served: 'pages',
  },
  {
    name: 'api_user_runners',
    verb: 'POST',
    spec: '/api/:version/user/runners(.:format)',
    owner: session,
    served: 'pages',
  },
  {
    name: 'api_users_personal_access_tokens',
    verb: 'POST',
    spec: '/api/:version/users/:user_id/personal_access_tokens(.:format)',
    owner: session,
    served: 'pages',
  },
  {
    name: 'api_runners_verify',
    verb: 'POST',
    spec: '/api/:version/runners/verify(.:format)',
    owner: session,
    served: 'pages',
  },
  {
    name: 'api_project',
    verb: 'GET',
    spec: '/api/:version/projects/:id(.:format)',
    owner: { by: 'project', param: 'id' },
    served: 'pages',
  },
  {
    name: 'git_info_refs',
    verb: 'GET',
    spec: `${REPOSITORY}/info/refs`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'git_upload_pack',
    verb: 'POST',
    spec: `${REPOSITORY}/git-upload-pack`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'git_receive_pack',
    verb: 'POST',
    spec: `${REPOSITORY}/git-receive-pack`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'ssh_upload_pack',
    verb: 'POST',
    spec: `${REPOSITORY}/ssh-upload-pack`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'ssh_receive_pack',
    verb: 'POST',
    spec: `${REPOSITORY}/ssh-receive-pack`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'ssh_upload_archive',
    verb: 'POST',
    spec: `${REPOSITORY}/ssh-upload-archive`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  ...[
    ['lfs_batch', 'POST', '/info/lfs/objects/batch'],
    ['lfs_locks_verify', 'POST', '/info/lfs/locks/verify'],
    ['lfs_download', 'GET', '/gitlab-lfs/objects/:oid'],
    ['lfs_upload_authorize', 'PUT', '/gitlab-lfs/objects/:oid/:size/authorize'],
    ['lfs_upload_finalize', 'PUT', '/gitlab-lfs/objects/:oid/:size'],
  ].map(
    ([name, verb, suffix]): RouteDef => ({
      name: name as string,
      verb: verb as Verb,
      spec: `${REPOSITORY}${suffix}`,
      owner: namespace('namespace_id'),
      served: 'pages',
    }),
  ),
  { name: 'repository', verb: 'GET', spec: REPOSITORY, owner: namespace('namespace_id'), served: 'pages' },
  {
    name: 'project_issue',
    verb: 'GET',
    spec: `${PROJECT}/-/issues/:id(.:format)`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'project_issues',
    verb: 'GET',
    spec: `${PROJECT}/-/issues(.:format)`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'project',
    verb: 'GET',
    spec: `${PROJECT}(.:format)`,
    owner: namespace('namespace_id'),
    served: 'pages',
  },
  {
    name: 'namespace',
    verb: 'GET',
    spec: '/*id(.:format)',
    owner: namespace('id'),
    constraints: { id: 'namespace' },
    served: 'pages',
  },
  internal('GET', '/check'),
  internal('GET', '/authorized_keys'),
  internal('GET', '/discover'),
  internal('POST', '/allowed'),
  internal('POST', '/personal_access_token'),
  internal('POST', '/two_factor_recovery_codes'),
  internal('POST', '/two_factor_manual_otp_check'),
  internal('POST', '/two_factor_push_otp_check'),
  internal('POST', '/lfs_authenticate'),
  internal('POST', '/pre_receive'),
  internal('POST', '/post_receive'),
  internal('GET', '/cells/learn'),
  internal('GET', '/cells/routes_snapshot'),
  internal('POST', '/admin/organizations/:path/move'),
  internal('GET', '/org_mover/maintenance_state'),
  internal('GET', '/org_mover/maintenance_readiness'),
  internal('POST', '/org_mover/start_maintenance'),
  internal('POST', '/org_mover/confirm_maintenance'),
  internal('POST', '/org_mover/cancel_maintenance'),
  internal('POST', '/org_mover/exit_maintenance'),
  internal('POST', '/org_mover/move'),
  internal('POST', '/shellhorse/git_audit_event'),
  { ...internal('GET', '/_test/hook-calls'), testOnly: true },
  { ...internal('POST', '/_test/ci_job_token'), testOnly: true },
];

/** A route of the internal API (`/api/v4/internal/…`, shell JWT), served by Fastify. */
function internal(verb: Verb, path: string): RouteDef {
  return {
    name: `internal ${verb} ${path}`,
    verb,
    spec: `/api/:version/internal${path}`,
    owner: session,
    served: 'fastify',
  };
}
