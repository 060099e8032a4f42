import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Environment for git commands in tests: no user or system config, fixed identity. */
export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test Author',
    GIT_AUTHOR_EMAIL: 'author@example.com',
    GIT_COMMITTER_NAME: 'Test Author',
    GIT_COMMITTER_EMAIL: 'author@example.com',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}

export async function git(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return run('git', args, { cwd: opts.cwd, env: gitEnv(opts.env), maxBuffer: 16 << 20 });
}

/**
 * Creates a bare repository at `dir` whose `main` branch has one commit with `files`, using
 * `git fast-import` (two processes per repository).
 */
export async function createBareRepo(dir: string, files: Record<string, string>): Promise<void> {
  await git(['init', '-q', '--bare', '-b', 'main', dir]);
  const parts = ['commit refs/heads/main', 'committer Test Author <author@example.com> 1700000000 +0000'];
  const message = 'initial commit\n';
  parts.push(`data ${Buffer.byteLength(message)}`, message);
  for (const [name, content] of Object.entries(files)) {
    parts.push(`M 644 inline ${name}`, `data ${Buffer.byteLength(content)}`, content);
  }
  const stream = `${parts.join('\n')}\n`;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet'], {
      cwd: dir,
      env: gitEnv(),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git fast-import failed: ${stderr}`)),
    );
    child.stdin.end(stream);
  });
}
