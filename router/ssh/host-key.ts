import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { promisify } from 'node:util';
import ssh2 from 'ssh2';
import { ConfigError } from '../../lib/config.js';

const run = promisify(execFile);

/**
 * The SSH host keys (gitlab-sshd `host_key_files`): each read from its file, or generated there
 * once (no passphrase, mode 600) with `ssh-keygen` so that clients see the same keys across
 * restarts. The type of a missing key comes from its file name as OpenSSH names them
 * (`ssh_host_rsa_key` RSA 3072, `ssh_host_ecdsa_key` ECDSA P-256, anything else Ed25519).
 */
export type HostKeyType = 'rsa' | 'ecdsa' | 'ed25519';

export const HOST_KEY_ARGS: Record<HostKeyType, readonly string[]> = {
  rsa: ['-t', 'rsa', '-b', '3072'],
  ecdsa: ['-t', 'ecdsa', '-b', '256'],
  ed25519: ['-t', 'ed25519'],
};

export function hostKeyTypeOf(file: string): HostKeyType {
  const name = basename(file);
  if (/ecdsa/.test(name)) return 'ecdsa';
  if (/rsa/.test(name)) return 'rsa';
  return 'ed25519';
}

export async function loadOrCreateHostKey(file: string): Promise<{ key: Buffer; created: boolean }> {
  let created = false;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const args = HOST_KEY_ARGS[hostKeyTypeOf(file)];
    try {
      await run('ssh-keygen', ['-q', ...args, '-N', '', '-C', 'gitlab-cells-router', '-f', file]);
    } catch (err) {
      throw new ConfigError(
        `cannot create the SSH host key ${file} with ssh-keygen: ${(err as Error).message}`,
      );
    }
    chmodSync(file, 0o600);
    created = true;
  }
  try {
    return { key: readFileSync(file), created };
  } catch (err) {
    throw new ConfigError(`cannot read the SSH host key ${file}: ${(err as Error).message}`);
  }
}

export interface HostKeys {
  keys: Buffer[];
  /** `ssh-rsa`, `ecdsa-sha2-nistp256`, `ssh-ed25519`, … in the files' order. */
  types: string[];
  created: string[];
}

/** Every configured key, checked to parse as a private key; two keys of one type are refused. */
export async function loadHostKeys(files: readonly string[]): Promise<HostKeys> {
  const out: HostKeys = { keys: [], types: [], created: [] };
  for (const file of files) {
    const { key, created } = await loadOrCreateHostKey(file);
    const parsed = ssh2.utils.parseKey(key);
    const first = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!first || first instanceof Error || first.isPrivateKey() !== true)
      throw new ConfigError(`the SSH host key ${file} is not an unencrypted private key`);
    if (out.types.includes(first.type))
      throw new ConfigError(`the SSH host key ${file} is a second ${first.type} key`);
    out.keys.push(key);
    out.types.push(first.type);
    if (created) out.created.push(file);
  }
  return out;
}
