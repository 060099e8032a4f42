/**
 * @file How the CLI finds a running world: `<data>/stack.json` and its control API.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ControlClient } from '../fixture/control-client.js';
import type { StackJson } from '../lib/contracts/stack.js';

/** The data folder of `--data-dir`, else STACK_DATA_DIR, else ./var (as `npm start`). */
export function dataDirOf(flag: string | undefined): string {
  return resolve(flag ?? process.env.STACK_DATA_DIR ?? './var');
}

/** The stack.json of a running world; throws with a clear message when there is none. */
export function readStackJson(dataDir: string): StackJson {
  const file = join(dataDir, 'stack.json');
  if (!existsSync(file)) throw new Error(`no world is running in ${dataDir} (no stack.json there)`);
  return JSON.parse(readFileSync(file, 'utf8')) as StackJson;
}

export function clientOf(json: StackJson): ControlClient {
  return new ControlClient(json.control.url, json.control.tokenFile);
}

/** The stack's main process: the parent of its services (read from /proc). */
export function stackPid(json: StackJson): number | undefined {
  for (const pid of Object.values(json.pids)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid > 1) return ppid;
    } catch {
      // that service is gone; try another
    }
  }
  return undefined;
}
