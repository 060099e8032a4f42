/**
 * @file GitLab's internal API (`/api/v4/internal/*`) as GitLab Shell (our router) and Gitaly's hooks
 * call it and as Rails (our mock cell) answers: the JSON bodies of `authorized_keys`, `discover` and
 * `allowed`, field names as on the wire (gitlab-shell `internal/gitlabnet/*`). The producer builds
 * these types; a consumer still checks what it receives, as `router/cells/internal-api.ts` does.
 */

/** Where the internal API is mounted. */
export const INTERNAL_API_PREFIX = '/api/v4/internal';

/**
 * Header of the "not mine" answer (`421 Misdirected Request`): the cell that owns the project
 * (docs/contracts.md "Learn answers and the \"not mine\" signal").
 */
export const CELL_REDIRECT_HEADER = 'X-Gitlab-Cell-Redirect';
export const MISDIRECTED_STATUS = 421;

/** The git commands GitLab Shell asks `/allowed` about. */
export const GIT_ACTIONS = ['git-upload-pack', 'git-receive-pack', 'git-upload-archive'] as const;
export type GitAction = (typeof GIT_ACTIONS)[number];

/** `GET /authorized_keys?key=<base64 blob>` → 200 (an unknown key: 404 `{message}`). */
export interface AuthorizedKeyJson {
  id: number;
  title: string;
  /** The key as stored: `ssh-ed25519 AAAA… comment` (or the bare blob). */
  key: string;
  created_at: string;
  expires_at: string | null;
}

/** `GET /discover?key_id=<id>` (or `user_id`, `username`) → 200: the user, `null` when the key has none. */
export type DiscoverJson = { id: number; name: string; username: string } | null;

/** `POST /allowed` as GitLab Shell sends it for an SSH git command (accessverifier `Request`). */
export interface ShellAllowedRequestJson {
  action: GitAction;
  /** `<namespace>/<project>.git` as the client typed it. */
  project: string;
  /** The SSH key's id; a certificate login sends `username` instead. */
  key_id?: string;
  username?: string;
  changes: '_any';
  protocol: 'ssh';
  check_ip?: string;
}

/** Every field a caller may send to `POST /allowed`: GitLab Shell's, and Gitaly hooks' for a push. */
export interface AllowedRequestJson {
  action: string;
  project?: string;
  /** Gitaly hooks name the repository by `project-<id>`; GitLab Shell never sends it. */
  gl_repository?: string;
  key_id?: string | number;
  user_id?: string | number;
  username?: string;
  /** `_any`, or `<old> <new> <ref>` lines from a hook. */
  changes?: string;
  protocol?: string;
  check_ip?: string;
  /** Gitaly hooks: a JSON string (or object) with `GIT_OBJECT_DIRECTORY_RELATIVE`. */
  env?: string | Record<string, unknown>;
  push_options?: string[] | null;
}

/** `gitaly.Repository` as Rails writes it into JSON (`/allowed` `gitaly.repository`, Workhorse `Repository`). */
export interface GitalyRepositoryJson {
  storage_name: string;
  relative_path: string;
  git_object_directory: string;
  git_alternate_object_directories: string[];
  gl_repository: string;
  gl_project_path: string;
}

/** `POST /allowed` → 200: access granted (accessverifier `Response`). */
export interface AllowedJson {
  status: true;
  gl_repository: string;
  gl_project_path: string;
  gl_project_id: number;
  gl_root_namespace_id: number;
  gl_id: string;
  gl_username: string;
  git_config_options: string[];
  gitaly: {
    repository: GitalyRepositoryJson;
    address: string;
    token: string;
    features: Record<string, string>;
  };
  /** Printed by GitLab Shell as `remote:` lines before the command runs. */
  gl_console_messages: string[];
  need_audit: boolean;
  /** Only when a key was used. */
  gl_key_type?: 'key';
  gl_key_id?: number;
}

/** `POST /allowed` → 300 Multiple Choices: GitLab Shell runs a custom action instead of the command. */
export const CUSTOM_ACTION_STATUS = 300;

/**
 * The custom action's body (accessverifier `CustomPayload`): on a Geo secondary,
 * `geo_proxy_to_primary` with the primary's internal API endpoints to replay the command against.
 */
export interface CustomActionJson {
  status: true;
  gl_id?: string;
  gl_username?: string;
  gl_console_messages?: string[];
  payload: {
    action: string;
    data: {
      api_endpoints: string[];
      gl_username: string;
      primary_repo: string;
      gl_id?: string;
      request_headers?: Record<string, string>;
      geo_proxy_fetch_ssh_direct_to_primary?: boolean;
      geo_proxy_push_ssh_direct_to_primary?: boolean;
    };
  };
}

/** `POST /allowed` refused: 401/403 (denied), 404 (unknown project or actor), 421 (another cell's project). */
export interface AllowedDenialJson {
  status: false;
  message: string;
}
