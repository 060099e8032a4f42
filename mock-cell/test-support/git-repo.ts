import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Runs git with a fixed identity, ignoring any GIT_* of the caller; returns trimmed stdout. */
export function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_')));
  return execFileSync('git', args, {
    cwd,
    env: {
      ...clean,
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: cwd,
      ...env,
    },
    encoding: 'utf8',
  }).trim();
}

/** Commits of the test repository: A ← B on main, A ← C on the diverging branch `other`. */
export interface RepoCommits {
  A: string;
  B: string;
  C: string;
}

/** Creates a bare repository at `bareDir` with the history of RepoCommits. */
export function createBareRepo(bareDir: string): RepoCommits {
  const work = mkdtempSync(join(tmpdir(), 'mock-cell-work-'));
  try {
    git(work, ['init', '-q', '--initial-branch=main', '.']);
    const commit = (file: string, message: string) => {
      writeFileSync(join(work, file), `${message}\n`);
      git(work, ['add', file]);
      git(work, ['commit', '-q', '-m', message]);
      return git(work, ['rev-parse', 'HEAD']);
    };
    const A = commit('a.txt', 'A');
    const B = commit('b.txt', 'B');
    git(work, ['checkout', '-q', '-b', 'other', A]);
    const C = commit('c.txt', 'C');
    mkdirSync(dirname(bareDir), { recursive: true });
    git(work, ['clone', '-q', '--bare', '--no-local', work, bareDir]);
    return { A, B, C };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Writes a commit with `parent` (tree of `treeOf`) into a quarantine object directory of the bare
 * repository only, as receive-pack does before the pre-receive hook runs.
 */
export function quarantineCommit(
  bareDir: string,
  quarantineRel: string,
  treeOf: string,
  parent: string,
): string {
  const env = {
    GIT_OBJECT_DIRECTORY: join(bareDir, quarantineRel),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: join(bareDir, 'objects'),
  };
  mkdirSync(env.GIT_OBJECT_DIRECTORY, { recursive: true });
  return git(bareDir, ['commit-tree', `${treeOf}^{tree}`, '-p', parent, '-m', 'quarantined'], env);
}
