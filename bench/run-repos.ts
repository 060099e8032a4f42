/** @file The run folder: the repositories generated (cached) and placed where every server serves them. */
import { existsSync } from 'node:fs';
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA, log, PROJECTS, projectDir, warmPageCache } from './bench-data.js';
import type { BenchOptions } from './options.js';
import { ensureRepo, type GeneratedRepo, placeRepo } from './repo-gen.js';

export interface PlacedRepos {
  large: GeneratedRepo;
  small: GeneratedRepo;
  slow: GeneratedRepo;
  pushSource: GeneratedRepo;
  history: GeneratedRepo;
  /** Where the stack and the other servers serve each one from. */
  dirs: { large: string; small: string; slow: string; history: string };
}

/** Removes the run folder, keeping the services' logs in `bench/data/logs-<mode>` when something failed. */
export async function removeRunDir(
  runDir: string,
  mode: BenchOptions['mode'],
  failed: boolean,
): Promise<void> {
  const logs = join(runDir, 'logs');
  const kept = join(DATA, `logs-${mode}`);
  await rm(kept, { recursive: true, force: true });
  if (failed && existsSync(logs)) {
    await cp(logs, kept, { recursive: true });
    process.stderr.write(`service logs of the failed run kept in ${kept}\n`);
  }
  await rm(runDir, { recursive: true, force: true });
}

/** The run's repositories, generated once (cached) and placed in a fresh run folder. */
export async function placeRepos(o: BenchOptions, runDir: string): Promise<PlacedRepos> {
  const cache = join(DATA, 'repos');
  log(`mode ${o.mode}; repositories cached in ${cache}`);
  const large = await ensureRepo(cache, o.largeRepo, { log });
  const small = await ensureRepo(cache, o.smallRepo, { log });
  const slow = o.slowRepo === o.largeRepo ? large : await ensureRepo(cache, o.slowRepo, { log });
  const pushSource = await ensureRepo(cache, o.pushObjects, { base: small, branch: 'bench-push', log });
  const history = await ensureRepo(cache, o.historyRepo, { log });

  await removeRunDir(runDir, o.mode, false);
  await mkdir(runDir, { recursive: true });
  const dir = (p: { path: string; cell: string }) => projectDir(runDir, p.path, p.cell);
  const dirs = {
    large: dir(PROJECTS.large),
    small: dir(PROJECTS.small),
    slow: dir(PROJECTS.slow),
    history: dir(PROJECTS.history),
  };
  await placeRepo(large, dirs.large);
  await placeRepo(small, dirs.small);
  await placeRepo(slow, dirs.slow);
  await placeRepo(history, dirs.history);
  for (const d of [dirs.large, dirs.slow, dirs.history]) await warmPageCache(d);
  return { large, small, slow, pushSource, history, dirs };
}
