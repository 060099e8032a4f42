import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../../lib/config.js';

const run = promisify(execFile);

/**
 * The SSH host key: read from `file`, or generated there once (ed25519, no passphrase, mode 600)
 * with `ssh-keygen` so that clients see the same host key across restarts.
 */
export async function loadOrCreateHostKey(file: string): Promise<{ key: Buffer; created: boolean }> {
  let created = false;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'gitlab-cells-router', '-f', file]);
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
