import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../lib/logger.js';
import { isGitRepository } from './repository.js';

/**
 * The quarantine receive-pack makes in `objects/` (git's tmp-objdir: `tmp_objdir-incoming-XXXXXX`
 * since 2.35, `incoming-XXXXXX` before). Other tmp-objdirs (`bulk-fsync`, `remerge-diff`) are not
 * receive-pack's and are left alone.
 */
const QUARANTINE_NAME = /^(tmp_objdir-)?incoming-[A-Za-z0-9]{6}$/;

/** Environment variables through which git's children reach a repository's object directories. */
const OBJECT_ENV = ['GIT_QUARANTINE_PATH=', 'GIT_OBJECT_DIRECTORY=', 'GIT_DIR='];

/** How deep repositories may sit below a storage (`@hashed/ab/cd/<hash>.git`, `group/sub/project.git`). */
const MAX_DEPTH = 8;

/** The quarantine folders in a repository's `objects/` (absolute paths). */
export function quarantinesOf(repoPath: string): string[] {
  const objects = join(repoPath, 'objects');
  try {
    return readdirSync(objects, { withFileTypes: true })
      .filter((e) => e.isDirectory() && QUARANTINE_NAME.test(e.name))
      .map((e) => join(objects, e.name));
  } catch {
    return [];
  }
}

const inside = (path: string, root: string) => path === root || path.startsWith(root + sep);

function readOr<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/**
 * What one live process holds in `root`: its working folder, an open file, or an object directory in
 * its environment; `unknown` when it cannot be read (another user's process) and is a git.
 */
function processUses(pid: string, root: string): boolean | 'unknown' {
  const proc = `/proc/${pid}`;
  const stat = readOr(() => readFileSync(`${proc}/stat`, 'utf8'), '');
  // Gone, or a zombie (it holds nothing any more).
  if (stat === '' || /\) Z /.test(stat)) return false;
  let unreadable = false;
  const attempt = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EACCES') unreadable = true;
      return fallback;
    }
  };
  const cwd = attempt(() => readlinkSync(`${proc}/cwd`), '');
  if (cwd !== '' && inside(cwd, root)) return true;
  const env = attempt(() => readFileSync(`${proc}/environ`, 'utf8'), '');
  for (const entry of env.split('\0')) {
    const prefix = OBJECT_ENV.find((p) => entry.startsWith(p));
    if (prefix && inside(entry.slice(prefix.length), root)) return true;
  }
  for (const fd of attempt(() => readdirSync(`${proc}/fd`), [] as string[])) {
    const target = readOr(() => readlinkSync(`${proc}/fd/${fd}`), '');
    if (target !== '' && inside(target, root)) return true;
  }
  if (!unreadable) return false;
  const comm = readOr(() => readFileSync(`${proc}/comm`, 'utf8'), '');
  return comm.startsWith('git') ? 'unknown' : false;
}

/**
 * Whether any live process other than this one may be working in the repository (Linux `/proc`):
 * receive-pack works in its repository's folder (git's `enter_repo` changes into it) from before it
 * makes its quarantine until after it removed or migrated it, and its children carry the quarantine
 * in `GIT_QUARANTINE_PATH`. A git process whose details cannot be read counts as using it.
 */
export function repositoryInUse(repoPath: string): boolean {
  const root = readOr(() => realpathSync(repoPath), repoPath);
  const self = String(process.pid);
  const pids = readOr(() => readdirSync('/proc'), [] as string[]).filter((n) => /^\d+$/.test(n));
  return pids.some((pid) => pid !== self && processUses(pid, root) !== false);
}

/**
 * Removes the repository's stale quarantines: those listed before the process scan found nobody in
 * the repository. Listing first matters: a quarantine made after the listing is not touched, and one
 * listed whose receive-pack still runs is kept because that receive-pack is seen in the repository.
 * Returns the removed folders, or undefined when the repository is in use.
 */
export async function sweepRepository(repoPath: string): Promise<string[] | undefined> {
  const found = quarantinesOf(repoPath);
  if (found.length === 0) return [];
  if (repositoryInUse(repoPath)) return undefined;
  for (const dir of found) await rm(dir, { recursive: true, force: true });
  return found;
}

/** Every bare repository below a storage folder (not looking inside repositories). */
export function repositoriesIn(storage: string, depth = 0): string[] {
  if (depth > MAX_DEPTH) return [];
  if (isGitRepository(storage)) return [storage];
  const entries = readOr(() => readdirSync(storage, { withFileTypes: true }), []);
  return entries
    .filter(
      (e) =>
        e.isDirectory() ||
        (e.isSymbolicLink() && readOr(() => statSync(join(storage, e.name)).isDirectory(), false)),
    )
    .flatMap((e) => repositoriesIn(join(storage, e.name), depth + 1));
}

export interface QuarantineSweeperOptions {
  storages: Readonly<Record<string, string>>;
  logger: Logger;
  /** Time between sweeps of every storage; undefined: none after the one at start. */
  intervalMs: number | undefined;
  /** How long a repository in use is retried after a failed push (or at start) before the next periodic sweep. */
  retryForMs?: number;
}

/** How often a repository in use is looked at again while `retryForMs` runs. */
const RETRY_EVERY_MS = 200;

/**
 * Mock Gitaly's stale-quarantine housekeeping. git ≥ 2.39 no longer removes its quarantine when it is
 * killed by a signal (SIGTERM, SIGPIPE, SIGKILL alike); only a normal exit does. Gitaly leaves such
 * folders to housekeeping (`git prune` removes `tmp_*` folders older than its two-week grace); this
 * sweep removes them as soon as no process is left in the repository: at start, after every push
 * that did not succeed, and every `intervalMs`.
 */
export class QuarantineSweeper {
  private timer: NodeJS.Timeout | undefined;
  private readonly retryForMs: number;
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly opts: QuarantineSweeperOptions) {
    this.retryForMs = opts.retryForMs ?? 10_000;
  }

  /** Sweeps every repository of every storage, then keeps sweeping every `intervalMs`. */
  start(): void {
    this.sweepAll();
    if (this.opts.intervalMs !== undefined) {
      this.timer = setInterval(() => this.sweepAll(), this.opts.intervalMs);
      this.timer.unref();
    }
  }

  /** Sweeps one repository now, and again while it is in use, for up to `retryForMs`. */
  sweepSoon(repoPath: string): Promise<void> {
    const run = this.sweepWithRetries(repoPath).finally(() => this.pending.delete(run));
    this.pending.add(run);
    return run;
  }

  /** Stops the timer and waits for the sweeps under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all([...this.pending]);
  }

  private sweepAll(): void {
    for (const storage of Object.values(this.opts.storages)) {
      for (const repo of repositoriesIn(storage)) {
        if (quarantinesOf(repo).length > 0) void this.sweepSoon(repo);
      }
    }
  }

  private async sweepWithRetries(repoPath: string): Promise<void> {
    const until = Date.now() + this.retryForMs;
    for (;;) {
      const removed = await sweepRepository(repoPath).catch((err: Error) => {
        this.opts.logger.warn({ repo: repoPath, err: err.message }, 'quarantine sweep failed');
        return [];
      });
      if (removed !== undefined) {
        if (removed.length > 0)
          this.opts.logger.info({ repo: repoPath, removed }, 'removed stale receive-pack quarantine');
        return;
      }
      if (this.stopped || Date.now() >= until) return;
      await sleep(RETRY_EVERY_MS);
    }
  }
}
