/**
 * @file The world flags of `dist/stack/main.js`: `--parent-pid P` (or `WORLD_PARENT_PID`): stop every
 * service and exit once process P is gone (a test runner that died); `--ephemeral`: remove the data
 * folder once the services have stopped. `startWorld` (`fixture/index.ts`) passes both.
 */
import { ConfigError } from '../lib/config.js';
import { watchSupervisor } from '../lib/supervisor-watch.js';

export const PARENT_PID_ENV = 'WORLD_PARENT_PID';

export interface WorldArgs {
  parentPid?: number;
  ephemeral: boolean;
}

function pid(raw: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw))
    throw new ConfigError(`${what} must be a process id, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export function worldArgs(argv: readonly string[], env: NodeJS.ProcessEnv): WorldArgs {
  const at = argv.indexOf('--parent-pid');
  const flag = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && flag === undefined) throw new ConfigError('--parent-pid needs a process id');
  const raw = flag ?? (env[PARENT_PID_ENV] || undefined);
  const parentPid = raw === undefined ? undefined : pid(raw, flag ? '--parent-pid' : PARENT_PID_ENV);
  return { ...(parentPid === undefined ? {} : { parentPid }), ephemeral: argv.includes('--ephemeral') };
}

/** Calls `onGone` once the parent named by the flags has ended (checked every 500 ms). */
export function watchParent(args: WorldArgs, onGone: () => void): () => void {
  return watchSupervisor(args.parentPid, onGone, 500);
}
