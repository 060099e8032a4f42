import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../lib/proto.js';

/** The hooks receive-pack runs through `core.hooksPath`; `update` is not needed. */
export const HOOK_NAMES = ['pre-receive', 'post-receive'] as const;

/**
 * The compiled hook program. From `dist/` it sits beside this module; when this module runs from
 * TypeScript sources (tests) the hook must still be compiled JavaScript, so `dist/` is used.
 */
export function defaultHookProgram(): string {
  const url = import.meta.url;
  if (url.endsWith('.js')) return fileURLToPath(new URL('./hook-main.js', url));
  return join(projectRoot(), 'dist', 'mock-gitaly', 'hook-main.js');
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Writes one executable wrapper per hook into `<runtimeDir>/hooks` that runs the hook program with
 * this Node binary, and returns that folder (the value for `core.hooksPath`).
 */
export async function installHooks(runtimeDir: string, hookProgram: string): Promise<string> {
  if (!existsSync(hookProgram)) {
    throw new Error(`hook program ${hookProgram} does not exist; build the project first (npm run build)`);
  }
  const dir = join(runtimeDir, 'hooks');
  await mkdir(dir, { recursive: true });
  for (const name of HOOK_NAMES) {
    const path = join(dir, name);
    const script = `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(hookProgram)} ${name}\n`;
    await writeFile(path, script);
    await chmod(path, 0o755);
  }
  return dir;
}
