/**
 * @file What every private nginx of this project shares (the benchmark's contender, `bench/nginx.ts`,
 * and the world's edge, `edge/nginx-config.ts`): Debian's binary, every path of its own under one
 * folder (pid, logs, temp folders; the system's config is never read), and its command line.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

export const NGINX = '/usr/sbin/nginx';

const TEMP_DIRS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'] as const;

/** The `*_temp_path` directives of an `http {}` block, every one under `<dir>/tmp`. */
export function nginxTempPaths(dir: string, indent = '  '): string {
  return TEMP_DIRS.map((d) => `${indent}${d}_temp_path ${join(dir, 'tmp', d)};`).join('\n');
}

/** Creates the temp folders `nginxTempPaths` names. */
export async function makeNginxTempDirs(dir: string): Promise<void> {
  for (const d of TEMP_DIRS) await mkdir(join(dir, 'tmp', d), { recursive: true });
}

/** `nginx -p <dir> -c <config> -e <dir>/error.log`, plus `-t -q` to only test the config. */
export function nginxArgs(dir: string, config: string, test = false): string[] {
  return [...(test ? ['-t', '-q'] : []), '-p', dir, '-c', config, '-e', join(dir, 'error.log')];
}

/** The workers' `user` directive: root when nginx starts as root (it would switch them to `nobody`), else none. */
export function nginxUserLine(): string {
  return process.getuid?.() === 0 ? 'user root;\n' : '';
}
