import type { AllowedJson, GitalyRepositoryJson } from '../lib/contracts/internal-api.js';
import type { WorkhorsePreauthJson } from '../lib/contracts/workhorse.js';
import { hashedRepoPath } from '../lib/repo-path.js';
import { type Actor, glId } from './identity.js';
import type { TopologyModel } from './topology.js';
import type { TopologyProject } from './topology-types.js';

/**
 * The success bodies Rails sends after a passed access check: `/allowed` (GitLab Shell, Gitaly
 * hooks) and `Gitlab::Workhorse.git_http_ok` for pre-authorization. Their shapes are the contracts
 * of `lib/contracts/` (`AllowedJson`, `WorkhorsePreauthJson`), which the router and bridge read.
 */

/** Git config GitLab hands to upload-pack on every `/allowed` success. */
export const ALLOWED_GIT_CONFIG_OPTIONS = [
  'uploadpack.allowFilter=true',
  'uploadpack.allowAnySHA1InWant=true',
];

export function glRepository(project: TopologyProject): string {
  return `project-${project.id}`;
}

export function gitalyRepository(model: TopologyModel, project: TopologyProject): GitalyRepositoryJson {
  return {
    storage_name: project.storage,
    relative_path: hashedRepoPath(project.id),
    git_object_directory: '',
    git_alternate_object_directories: [],
    gl_repository: glRepository(project),
    gl_project_path: model.fullPath(project),
  };
}

/** `POST /api/v4/internal/allowed` success (HTTP 200). Key fields only when a key was used. */
export function allowedPayload(
  model: TopologyModel,
  project: TopologyProject,
  actor: Actor,
  gitalyToken: string,
): AllowedJson {
  const cell = model.cellOfProject(project);
  return {
    status: true,
    gl_repository: glRepository(project),
    gl_project_path: model.fullPath(project),
    gl_project_id: project.id,
    gl_root_namespace_id: model.namespaceOf(project).id,
    gl_id: glId(actor.user),
    gl_username: actor.user.username,
    git_config_options: [...ALLOWED_GIT_CONFIG_OPTIONS],
    gitaly: {
      repository: gitalyRepository(model, project),
      address: cell.gitaly.address,
      token: gitalyToken,
      features: {},
    },
    gl_console_messages: [],
    need_audit: false,
    ...(actor.key ? { gl_key_type: 'key', gl_key_id: actor.key.id } : {}),
  };
}

/**
 * Pre-authorization success (`application/vnd.gitlab-workhorse+json`). A Geo node's own request
 * (no actor: Rails' `:geo`) has an empty `GL_ID` and `GL_USERNAME`, and Geo requests see all refs.
 */
export function workhorsePayload(
  model: TopologyModel,
  project: TopologyProject,
  actor: Actor | undefined,
  gitalyToken: string,
  remoteIp: string | undefined,
  geoRequest = false,
): WorkhorsePreauthJson {
  const cell = model.cellOfProject(project);
  const user = actor?.user;
  return {
    GL_ID: user ? glId(user) : '',
    GL_REPOSITORY: glRepository(project),
    GL_USERNAME: user?.username ?? '',
    ShowAllRefs: geoRequest,
    NeedAudit: false,
    Repository: gitalyRepository(model, project),
    GitConfigOptions: [],
    GitalyServer: {
      address: cell.gitaly.address,
      token: gitalyToken,
      call_metadata: {
        ...(user ? { user_id: String(user.id), username: user.username } : {}),
        ...(remoteIp ? { remote_ip: remoteIp } : {}),
      },
    },
    ProjectID: project.id,
    RootNamespaceID: model.namespaceOf(project).id,
  };
}
