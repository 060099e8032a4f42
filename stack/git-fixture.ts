import { execFile, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

const AUTHOR = 'Demo Author <demo@example.com>';

/** Environment for git commands of the fixtures: no user or system configuration leaks in. */
function gitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
}

/** A fast-import data block: exact byte count, then the optional LF that ends it. */
function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

/** One fast-import commit: files to write (path → content), on `ref`, after `from` (a mark). */
function commit(
  ref: string,
  mark: number,
  time: number,
  message: string,
  files: Record<string, string>,
  from?: number,
) {
  let out = `commit ${ref}\nmark :${mark}\nauthor ${AUTHOR} ${time} +0000\ncommitter ${AUTHOR} ${time} +0000\n`;
  out += data(message);
  if (from) out += `from :${from}\n`;
  for (const [path, content] of Object.entries(files)) out += `M 100644 inline ${path}\n${data(content)}`;
  return out;
}

/**
 * The fast-import stream of a demo project: three commits on `main`, `develop` at main's head,
 * `feature/login` one commit ahead, annotated tag `v1.0.0` and lightweight tag `v1.1.0`.
 * Fixed identities and clocks make it deterministic.
 */
export function demoHistory(projectPath: string): string {
  const t0 = Date.UTC(2026, 0, 1) / 1000;
  return [
    commit('refs/heads/main', 1, t0 + 3600, 'Initial commit', {
      'README.md': `# ${projectPath}\n\nDemo project served by GitLab Cells.\n`,
    }),
    commit('refs/heads/main', 2, t0 + 7200, 'Add changelog', {
      'CHANGELOG.md': '## 1.0.0\n\n- First release\n',
    }),
    `tag v1.0.0\nfrom :2\ntagger ${AUTHOR} ${t0 + 7300} +0000\n${data('Release 1.0.0')}`,
    commit('refs/heads/main', 3, t0 + 10800, 'Add the application', {
      'src/app.txt': 'hello from the cells demo\n',
    }),
    'reset refs/tags/v1.1.0\nfrom :3\n',
    'reset refs/heads/develop\nfrom :3\n',
    commit(
      'refs/heads/feature/login',
      4,
      t0 + 14400,
      'Add login form',
      { 'src/login.txt': 'login form\n' },
      3,
    ),
    'done\n',
  ].join('');
}

function fastImport(bareDir: string, stream: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', '--done'], {
      cwd: bareDir,
      env: gitEnv(),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    const err: Buffer[] = [];
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`git fast-import failed (${code}): ${Buffer.concat(err).toString()}`)),
    );
    child.stdin.end(stream);
  });
}

/** Creates a bare repository at `bareDir` holding the demo history of `projectPath`. */
export async function createDemoRepository(bareDir: string, projectPath: string): Promise<void> {
  await mkdir(bareDir, { recursive: true });
  await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', bareDir], { env: gitEnv() });
  await fastImport(bareDir, demoHistory(projectPath));
}
