import type { Logger } from '../lib/logger.js';
import type { SSHReceivePackRequest, SSHUploadPackRequest } from '../lib/proto.js';
import { InvalidArgument } from './errors.js';
import { encodeHooksPayload, HOOKS_PAYLOAD_ENV, type HooksPayload } from './hooks-payload.js';

/** A process to run: argv and a complete environment (nothing is inherited implicitly). */
export interface GitCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export const GIT = 'git';

/** Gitaly's defaults for upload-pack (the request may override them). */
const UPLOAD_PACK_DEFAULTS = ['uploadpack.allowFilter=true', 'uploadpack.allowAnySHA1InWant=true'];
/** Gitaly's defaults for receive-pack (the request may override them). */
const RECEIVE_PACK_DEFAULTS = ['receive.advertisePushOptions=true', 'transfer.fsckObjects=true'];

/**
 * Keys a request may not set: they would run arbitrary programs as this server or bypass the hooks.
 * Gitaly trusts its authenticated clients here; we refuse them as defence in depth.
 */
const FORBIDDEN_KEYS = new Set([
  'core.hookspath',
  'core.fsmonitor',
  'core.sshcommand',
  'core.alternaterefscommand',
  'uploadpack.packobjectshook',
]);

/** `key=value` strings → `-c key=value` argv; split on the first `=`, as Gitaly does. */
export function configArgs(options: readonly string[]): string[] {
  const args: string[] = [];
  for (const option of options) {
    const eq = option.indexOf('=');
    const key = eq === -1 ? '' : option.slice(0, eq).trim();
    if (key === '' || /\s/.test(key)) {
      throw InvalidArgument(`cannot convert invalid config key: ${JSON.stringify(option)}`);
    }
    if (FORBIDDEN_KEYS.has(key.toLowerCase())) {
      throw InvalidArgument(`config key not allowed: ${JSON.stringify(key)}`);
    }
    args.push('-c', `${key}=${option.slice(eq + 1)}`);
  }
  return args;
}

/** `GIT_PROTOCOL` only for exactly `version=1` / `version=2`; anything else means v0 (logged). */
export function protocolEnv(gitProtocol: string | undefined, logger: Logger): Record<string, string> {
  if (gitProtocol === 'version=1' || gitProtocol === 'version=2') return { GIT_PROTOCOL: gitProtocol };
  if (gitProtocol) logger.warn({ git_protocol: gitProtocol }, 'invalid git protocol requested');
  return {};
}

/** A minimal environment: no system or global git config, no prompts, C locale. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  };
  if (process.env.HOME) env.HOME = process.env.HOME;
  return env;
}

export function uploadPackCommand(repoPath: string, req: SSHUploadPackRequest, logger: Logger): GitCommand {
  const config = configArgs([...UPLOAD_PACK_DEFAULTS, ...(req.git_config_options ?? [])]);
  return {
    file: GIT,
    args: [...config, 'upload-pack', '--end-of-options', repoPath],
    env: { ...baseEnv(), ...protocolEnv(req.git_protocol, logger) },
    cwd: repoPath,
  };
}

export function receivePackCommand(
  repoPath: string,
  req: SSHReceivePackRequest,
  hooks: { dir: string; payload: HooksPayload },
  logger: Logger,
): GitCommand {
  const config = configArgs([...RECEIVE_PACK_DEFAULTS, ...(req.git_config_options ?? [])]);
  return {
    file: GIT,
    // core.hooksPath comes last so it always wins; the request cannot set it anyway.
    args: [...config, '-c', `core.hooksPath=${hooks.dir}`, 'receive-pack', '--end-of-options', repoPath],
    env: {
      ...baseEnv(),
      ...protocolEnv(req.git_protocol, logger),
      [HOOKS_PAYLOAD_ENV]: encodeHooksPayload(hooks.payload),
    },
    cwd: repoPath,
  };
}

/** upload-archive does not support `--end-of-options`. */
export function uploadArchiveCommand(repoPath: string): GitCommand {
  return { file: GIT, args: ['upload-archive', repoPath], env: baseEnv(), cwd: repoPath };
}
