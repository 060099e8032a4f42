import { realpathSync } from 'node:fs';
import { delimiter, relative, resolve } from 'node:path';
import { readSecretFile } from '../lib/secrets.js';
import { InternalApi, InternalApiError, type PostReceiveMessage } from './hook-api.js';
import { decodeHooksPayload, HOOKS_PAYLOAD_ENV, type HooksPayload } from './hooks-payload.js';

export type HookName = 'pre-receive' | 'post-receive';

/** What a hook reads and writes; `hook-main.ts` wires it to the process. */
export interface HookIo {
  /** The hook's stdin: `<old> <new> <ref>` lines. */
  stdin: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Push options (`git push -o`), as receive-pack passes them to hooks. */
export function pushOptions(env: NodeJS.ProcessEnv): string[] {
  const count = Number(env.GIT_PUSH_OPTION_COUNT ?? '0');
  if (!Number.isInteger(count) || count <= 0) return [];
  const options: string[] = [];
  for (let i = 0; i < count; i++) {
    const option = env[`GIT_PUSH_OPTION_${i}`];
    if (option !== undefined) options.push(option);
  }
  return options;
}

/** `user-<n>` → `user_id`, `key-<n>` → `key_id`, `username-<name>` → `username`. */
export function identityParams(glId: string): Record<string, string> {
  const m = /^(user|key|username)-(.+)$/.exec(glId);
  if (!m) return {};
  const [, kind, value] = m as unknown as [string, string, string];
  return kind === 'user' ? { user_id: value } : kind === 'key' ? { key_id: value } : { username: value };
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The quarantine object directories relative to the repository, as `/allowed` expects them in `env`
 * (so Rails can look at the pushed objects before they are accepted).
 */
export function objectDirectoriesEnv(env: NodeJS.ProcessEnv, repoPath: string, cwd: string): string {
  const repo = canonical(repoPath);
  const rel = (dir: string) => relative(repo, canonical(resolve(cwd, dir)));
  const objectDir = env.GIT_OBJECT_DIRECTORY || env.GIT_QUARANTINE_PATH;
  const alternates = (env.GIT_ALTERNATE_OBJECT_DIRECTORIES ?? '').split(delimiter).filter((d) => d !== '');
  return JSON.stringify({
    ...(objectDir ? { GIT_OBJECT_DIRECTORY_RELATIVE: rel(objectDir) } : {}),
    GIT_ALTERNATE_OBJECT_DIRECTORIES_RELATIVE: alternates.map(rel),
  });
}

const ALERT_RULE = '='.repeat(72);

/**
 * Post-receive messages as GitLab prints them: each preceded by an empty line, basic ones as they
 * are, alerts between two rules of `=` with their lines centred.
 */
export function formatPostReceiveMessages(messages: readonly PostReceiveMessage[]): string {
  if (messages.length === 0) return '';
  const body = messages.map(({ message, type }) => {
    if (type !== 'alert') return `\n${message}`;
    const lines = message.split('\n').map((line) => ' '.repeat(Math.max(0, (72 - line.length) >> 1)) + line);
    return `\n${ALERT_RULE}\n\n${lines.join('\n')}\n\n${ALERT_RULE}`;
  });
  return `${body.join('')}\n`;
}

async function preReceive(api: InternalApi, payload: HooksPayload, io: HookIo): Promise<number> {
  const allowed = await api.allowed({
    action: 'git-receive-pack',
    gl_repository: payload.gl_repository,
    project: payload.repo_path,
    changes: io.stdin,
    protocol: payload.protocol,
    env: objectDirectoriesEnv(io.env, payload.repo_path, io.cwd),
    ...identityParams(payload.gl_id),
    push_options: pushOptions(io.env),
  });
  if (!allowed.status) {
    io.stderr(`GitLab: ${allowed.message || 'You are not allowed to push code to this project.'}\n`);
    return 1;
  }
  if (!(await api.preReceive(payload.gl_repository))) {
    io.stderr('GitLab: shared storage reference counter not increased\n');
    return 1;
  }
  return 0;
}

async function postReceive(api: InternalApi, payload: HooksPayload, io: HookIo): Promise<number> {
  const messages = await api.postReceive({
    gl_repository: payload.gl_repository,
    identifier: payload.gl_id,
    changes: io.stdin,
    push_options: pushOptions(io.env),
  });
  io.stdout(formatPostReceiveMessages(messages));
  return 0;
}

/**
 * Runs one hook and returns its exit code. pre-receive fails closed (any problem rejects the push);
 * post-receive never fails the push (the refs are already updated), it only warns.
 */
export async function runHook(name: HookName, io: HookIo): Promise<number> {
  const failureCode = name === 'pre-receive' ? 1 : 0;
  let payload: HooksPayload;
  let api: InternalApi;
  try {
    payload = decodeHooksPayload(io.env[HOOKS_PAYLOAD_ENV]);
    api = new InternalApi(
      payload.gitlab_url,
      readSecretFile(payload.gitlab_secret_file, 'GitLab Shell secret'),
    );
  } catch (err) {
    io.stderr(`GitLab: ${name} hook is misconfigured: ${(err as Error).message}\n`);
    return failureCode;
  }
  try {
    return name === 'pre-receive' ? await preReceive(api, payload, io) : await postReceive(api, payload, io);
  } catch (err) {
    const reason = err instanceof InternalApiError ? err.message : `hook failed: ${(err as Error).message}`;
    io.stderr(name === 'pre-receive' ? `GitLab: ${reason}\n` : `GitLab: warning: post-receive: ${reason}\n`);
    return failureCode;
  }
}
