import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from './config.js';

/**
 * Reads a shared secret from a file. The file must not be readable or writable by group or
 * others (mode & 0o077 == 0), like ssh refuses loose private keys. Surrounding whitespace is
 * trimmed, as GitLab Shell and Rails do.
 */
export function readSecretFile(path: string, what = 'secret'): string {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (err) {
    throw new ConfigError(`cannot read ${what} file ${path}: ${(err as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new ConfigError(
      `${what} file ${path} has permissions ${(mode & 0o777).toString(8)}; it must be readable by its owner only (chmod 600)`,
    );
  }
  const value = readFileSync(path, 'utf8').trim();
  if (value === '') throw new ConfigError(`${what} file ${path} is empty`);
  return value;
}
