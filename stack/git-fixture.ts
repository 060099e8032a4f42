import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs git with a fixed identity and clock so demo history is deterministic. */
export async function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Demo Author',
      GIT_AUTHOR_EMAIL: 'demo@example.com',
      GIT_COMMITTER_NAME: 'Demo Author',
      GIT_COMMITTER_EMAIL: 'demo@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: cwd,
      ...env,
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/**
 * Creates a bare repository at `bareDir` with real history: three commits on `main`, branches
 * `develop` and `feature/login`, an annotated tag `v1.0.0` and a lightweight tag `v1.1.0`.
 */
export async function createDemoRepository(bareDir: string, projectPath: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'demo-repo-'));
  try {
    await git(work, ['init', '-q', '--initial-branch=main', '.']);
    let clock = Date.UTC(2026, 0, 1) / 1000;
    const commit = async (file: string, content: string, message: string) => {
      await mkdir(dirname(join(work, file)), { recursive: true });
      await writeFile(join(work, file), content);
      await git(work, ['add', file]);
      clock += 3600;
      const date = `${clock} +0000`;
      await git(work, ['commit', '-q', '-m', message], { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
    };
    await commit('README.md', `# ${projectPath}\n\nDemo project served by GitLab Cells.\n`, 'Initial commit');
    await commit('CHANGELOG.md', '## 1.0.0\n\n- First release\n', 'Add changelog');
    await git(work, ['tag', '-a', 'v1.0.0', '-m', 'Release 1.0.0'], { GIT_COMMITTER_DATE: `${clock} +0000` });
    await commit('src/app.txt', 'hello from the cells demo\n', 'Add the application');
    await git(work, ['tag', 'v1.1.0']);
    await git(work, ['branch', 'develop']);
    await git(work, ['checkout', '-q', '-b', 'feature/login']);
    await commit('src/login.txt', 'login form\n', 'Add login form');
    await git(work, ['checkout', '-q', 'main']);
    await git(work, ['clone', '-q', '--bare', '--no-local', work, bareDir]);
    await git(bareDir, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
    await git(bareDir, ['remote', 'remove', 'origin']).catch(() => undefined);
    await git(bareDir, ['config', '--unset-all', 'remote.origin.fetch']).catch(() => undefined);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
