/** @file Where the benchmark keeps its data and results, the demo projects it replaces, its log line. */
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../lib/proto.js';
import { hashedRepoPath } from '../lib/repo-path.js';
import { stackPaths } from '../stack/layout.js';
import { demoWorld } from '../stack/topology-file-load.js';
import type { GeneratedRepo } from './repo-gen.js';
import type { RepoFacts } from './results.js';
import { MIB } from './stats.js';

export const ROOT = projectRoot();
export const DATA = join(ROOT, 'bench', 'data');
export const RESULTS = join(ROOT, 'bench', 'results');

/** The demo projects the benchmark repositories replace (see topologies/demo.json). */
export const PROJECTS = {
  large: { path: 'gitlab-org/gitlab', cell: 'cell_us0' },
  small: { path: 'gitlab-org/gitlab-test', cell: 'cell_us0' },
  slow: { path: 'my-company/my-project', cell: 'cell_eu0', username: 'alice' },
  /** The realistic history: a public project of another cell, which bob may clone. */
  history: { path: 'acme.corp/www.site', cell: 'cell_us1' },
} as const;
/** The cells-path user: Maintainer of gitlab-org (clones and pushes a branch). */
export const CELLS_USER = 'bob';
/** The benchmark's second bridge of the large repository's cell, in `gitalyUploadPack: "stream"` mode. */
export const STREAM_BRIDGE = `bridge-stream-${PROJECTS.large.cell}`;
/** Stack services whose mains preload bench/cpu-profiler.ts under `--profile`. */
export const PROFILED = /^(router|router-topology|bridge-.+|gitaly-.+|mock-cell)$/;

export function log(line: string): void {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

export function projectDir(dataDir: string, projectPath: string, cell: string): string {
  const project = demoWorld().projects.find((p) => `${p.namespace}/${p.path}` === projectPath);
  if (!project) throw new Error(`no demo project ${projectPath}`);
  return join(stackPaths(dataDir).storage(cell), hashedRepoPath(project.id));
}

export function facts(repo: GeneratedRepo): RepoFacts {
  return { packBytes: repo.packBytes, files: repo.spec.files, fileBytes: repo.spec.fileBytes };
}

/** Reads the pack files once so every contender starts with them in the page cache. */
export async function warmPageCache(dir: string): Promise<void> {
  const packDir = join(dir, 'objects', 'pack');
  for (const f of await readdir(packDir)) {
    await new Promise<void>((resolve, reject) => {
      const s = createReadStream(join(packDir, f), { highWaterMark: 4 * MIB });
      s.on('data', () => undefined);
      s.once('end', resolve);
      s.once('error', reject);
    });
  }
}
