/**
 * What mock Gitaly hands its receive-pack hooks, in env `GITALY_HOOKS_PAYLOAD` as base64 JSON. Our own
 * shape (Gitaly's real payload carries a socket and token to call back into Gitaly; ours carries what
 * the hooks need to call Rails directly):
 * - `gl_id`: `user-<id>` | `key-<id>` | `username-<name>` (from the request, required);
 * - `gl_username`, `gl_repository` (`project-<id>`), `gl_project_path` (may be empty);
 * - `protocol`: `"ssh"` for SSHReceivePack, `"http"` for SmartHTTPService's PostReceivePack, as
 *   Gitaly hard-codes each;
 * - `repo_path`: absolute path of the bare repository;
 * - `gitlab_url`: the cell's Rails; `gitlab_secret_file`: the shell secret that signs the hook requests.
 */
export interface HooksPayload {
  gl_id: string;
  gl_username: string;
  gl_repository: string;
  gl_project_path: string;
  protocol: 'ssh' | 'http';
  repo_path: string;
  gitlab_url: string;
  gitlab_secret_file: string;
}

export const HOOKS_PAYLOAD_ENV = 'GITALY_HOOKS_PAYLOAD';

export function encodeHooksPayload(payload: HooksPayload): string {
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

const FIELDS = [
  'gl_id',
  'gl_username',
  'gl_repository',
  'gl_project_path',
  'repo_path',
  'gitlab_url',
  'gitlab_secret_file',
] as const;

/** Parses and checks the env value; throws a readable error when it is missing or malformed. */
export function decodeHooksPayload(encoded: string | undefined): HooksPayload {
  if (!encoded) throw new Error(`${HOOKS_PAYLOAD_ENV} is not set`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw new Error(`${HOOKS_PAYLOAD_ENV} is not base64 JSON`);
  }
  if (parsed === null || typeof parsed !== 'object') throw new Error(`${HOOKS_PAYLOAD_ENV} is not an object`);
  const record = parsed as Record<string, unknown>;
  for (const field of FIELDS) {
    if (typeof record[field] !== 'string') throw new Error(`${HOOKS_PAYLOAD_ENV} lacks the string ${field}`);
  }
  if (record.protocol !== 'ssh' && record.protocol !== 'http')
    throw new Error(`${HOOKS_PAYLOAD_ENV} has protocol other than "ssh" or "http"`);
  return record as unknown as HooksPayload;
}
