import { execFile } from 'node:child_process';
import { GitFailed, GitTimeout } from './errors.js';

/** Object directories of a push still in quarantine (Gitaly hooks send them relative to the repo). */
export interface ObjectDirs {
  objectDirectory: string;
  alternateDirectories: string[];
}

/** Read-only questions the access check asks of a repository. */
export interface GitInspector {
  /** true when `ancestor` is an ancestor of (or equal to) `descendant`. */
  isAncestor(repoDir: string, ancestor: string, descendant: string, dirs?: ObjectDirs): Promise<boolean>;
}

export const GIT_TIMEOUT_MS = 5_000;

/** The environment for git: ours, minus any GIT_* variable that could redirect it, plus `dirs`. */
function gitEnv(dirs: ObjectDirs | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  if (dirs) {
    env.GIT_OBJECT_DIRECTORY = dirs.objectDirectory;
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = dirs.alternateDirectories.join(':');
  }
  return env;
}

/** Runs the real `git` binary (no shell) with a timeout. */
export function createGitInspector(opts: { gitBinary?: string; timeoutMs?: number } = {}): GitInspector {
  const binary = opts.gitBinary ?? 'git';
  const timeout = opts.timeoutMs ?? GIT_TIMEOUT_MS;
  return {
    isAncestor(repoDir, ancestor, descendant, dirs) {
      const args = ['--git-dir', repoDir, 'merge-base', '--is-ancestor', ancestor, descendant];
      return new Promise((resolve, reject) => {
        execFile(
          binary,
          args,
          { env: gitEnv(dirs), timeout, killSignal: 'SIGKILL' },
          (err, _stdout, stderr) => {
            if (!err) return resolve(true);
            if (err.killed)
              return reject(GitTimeout(`git merge-base did not finish within ${timeout} ms`, err));
            if (err.code === 1) return resolve(false);
            reject(GitFailed(`git merge-base failed (exit ${String(err.code)}): ${stderr.trim()}`, err));
          },
        );
      });
    },
  };
}
