import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { jwtKey, SHELL_HEADER, verifyShellJwt } from '../lib/jwt.js';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';
import {
  cleanup,
  createRepo,
  git,
  run,
  type StartedGitaly,
  startGitaly,
  tempDir,
  writeSecret,
} from './test-support/harness.js';

/** Real git clients (clone, push, archive --remote) through the server, via a fake `ssh`. */

const SHELL_SECRET = 'a-shell-secret-for-hooks';
const REPO = 'group/project.git';

let programs: CompiledPrograms;
beforeAll(async () => {
  programs = await compilePrograms([
    'mock-gitaly/hook-main.ts',
    'mock-gitaly/main.ts',
    'mock-gitaly/test-support/fake-ssh.ts',
  ]);
}, 120_000);
afterAll(() => programs?.cleanup());

interface RailsRequest {
  path: string;
  body: Record<string, unknown>;
  jwtValid: boolean;
}

/** A Rails stand-in for the hook endpoints; `answers` decides each response. */
class FakeRails {
  readonly requests: RailsRequest[] = [];
  answers: Record<string, { status: number; body: unknown }> = {
    allowed: { status: 200, body: { status: true, message: '' } },
    pre_receive: { status: 200, body: { reference_counter_increased: true } },
    post_receive: { status: 200, body: { reference_counter_decreased: true, messages: [] } },
  };
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return `http://127.0.0.1:${address.port}`;
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').replace('/api/v4/internal/', '');
    const jwt = await verifyShellJwt(jwtKey(SHELL_SECRET), req.headers[SHELL_HEADER] as string | undefined);
    this.requests.push({
      path,
      body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
      jwtValid: jwt.ok && req.headers['content-type'] === 'application/json',
    });
    const answer = this.answers[path] ?? { status: 404, body: { message: 'not found' } };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

let g: StartedGitaly;
let rails: FakeRails;
let commit: string;

function sshEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    GIT_SSH_COMMAND: `"${process.execPath}" "${programs.path('mock-gitaly/test-support/fake-ssh.ts')}"`,
    GIT_SSH_VARIANT: 'ssh',
    FAKE_SSH_GITALY: g.address,
    FAKE_SSH_TOKEN: g.token,
    FAKE_SSH_STORAGE: 'default',
    FAKE_SSH_GL_ID: 'user-7',
    FAKE_SSH_GL_USERNAME: 'alice',
    FAKE_SSH_GL_REPOSITORY: 'project-7',
    ...extra,
  };
}

const url = `ssh://git@gitaly.test/${REPO}`;

beforeEach(async () => {
  rails = new FakeRails();
  const railsUrl = await rails.start();
  const dir = tempDir();
  g = await startGitaly(
    {
      gitlabUrl: railsUrl,
      gitlabSecretFile: writeSecret(dir, 'shell_secret', SHELL_SECRET),
      legacyUploadPack: true,
    },
    { hookProgram: programs.path('mock-gitaly/hook-main.ts') },
  );
  commit = await createRepo(g.storage, REPO, { 'README.md': '# project\n', 'docs/guide.md': 'guide\n' });
});

afterEach(async () => {
  await rails.stop();
  await cleanup();
});

describe('git clone / fetch', () => {
  it.each([
    ['2', 'sidechannel'],
    ['0', 'sidechannel'],
    ['2', 'stream'],
    ['0', 'stream'],
  ])('clones with protocol v%s over %s', async (version, mode) => {
    const dest = join(tempDir(), 'clone');
    const res = await run('git', ['-c', `protocol.version=${version}`, 'clone', url, dest], {
      env: sshEnv({ FAKE_SSH_UPLOAD_PACK: mode }),
    });
    expect(res.stderr).not.toMatch(/fatal|fake-ssh/);
    expect(res.code).toBe(0);
    expect(await git(['rev-parse', 'HEAD'], { cwd: dest })).toBe(commit);
    expect(readFileSync(join(dest, 'docs/guide.md'), 'utf8')).toBe('guide\n');
  });

  it.each([
    ['shallow', ['--depth=1'], '2'],
    ['shallow v0', ['--depth=1'], '0'],
    ['partial', ['--filter=blob:none'], '2'],
  ])('%s clone over the sidechannel (Gitaly TestUploadPack_successful)', async (_name, args, version) => {
    const dest = join(tempDir(), 'clone');
    const res = await run('git', ['-c', `protocol.version=${version}`, 'clone', ...args, url, dest], {
      env: sshEnv(),
    });
    expect(res.stderr).not.toMatch(/fatal|fake-ssh/);
    expect(res.code).toBe(0);
    expect(await git(['rev-parse', 'HEAD'], { cwd: dest })).toBe(commit);
  });

  it('a mock Gitaly without legacyUploadPack refuses the stream mode with UNIMPLEMENTED', async () => {
    await g.gitaly.stop(100);
    g = await startGitaly(
      { storages: { default: g.storage } },
      { hookProgram: programs.path('mock-gitaly/hook-main.ts') },
    );
    const res = await run('git', ['clone', url, join(tempDir(), 'clone')], {
      env: sshEnv({ FAKE_SSH_UPLOAD_PACK: 'stream' }),
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'fake-ssh: UNIMPLEMENTED: unknown method SSHUploadPack for service gitaly.SSHService',
    );
  });

  it('fetches new commits into an existing clone, and ls-remote lists refs', async () => {
    const dest = join(tempDir(), 'clone');
    await git(['clone', url, dest], { env: sshEnv() });
    const work = join(tempDir(), 'work');
    await git(['clone', `file://${join(g.storage, REPO)}`, work]);
    writeFileSync(join(work, 'new.txt'), 'new\n');
    await git(['add', '.'], { cwd: work });
    await git(['commit', '-m', 'second'], { cwd: work });
    await git(['push', 'origin', 'main'], { cwd: work });
    const second = await git(['rev-parse', 'HEAD'], { cwd: work });

    await git(['fetch', 'origin'], { cwd: dest, env: sshEnv() });
    expect(await git(['rev-parse', 'origin/main'], { cwd: dest })).toBe(second);
    expect(await git(['ls-remote', url], { env: sshEnv() })).toContain(`${second}\trefs/heads/main`);
  });
});

describe('git push (receive-pack with hooks)', () => {
  async function cloneAndCommit(): Promise<{ work: string; next: string }> {
    const work = join(tempDir(), 'work');
    await git(['clone', url, work], { env: sshEnv() });
    writeFileSync(join(work, 'pushed.txt'), 'pushed\n');
    await git(['add', '.'], { cwd: work });
    await git(['commit', '-m', 'pushed commit'], { cwd: work });
    return { work, next: await git(['rev-parse', 'HEAD'], { cwd: work }) };
  }

  const bareHead = () => git(['rev-parse', 'refs/heads/main'], { cwd: join(g.storage, REPO) });

  it('calls /allowed, /pre_receive and /post_receive with the push and prints the messages', async () => {
    rails.answers.post_receive = {
      status: 200,
      body: {
        reference_counter_decreased: true,
        messages: [
          { message: 'To create a merge request, visit:\n  http://example.test/mr', type: 'basic' },
          { message: 'Project moved!', type: 'alert' },
        ],
      },
    };
    const { work, next } = await cloneAndCommit();
    const res = await run('git', ['push', '-o', 'ci.skip', '-o', 'merge_request.create', 'origin', 'main'], {
      cwd: work,
      env: sshEnv(),
    });
    expect(res.code).toBe(0);
    expect(await bareHead()).toBe(next);

    expect(rails.requests.map((r) => r.path)).toEqual(['allowed', 'pre_receive', 'post_receive']);
    expect(rails.requests.every((r) => r.jwtValid)).toBe(true);
    const changes = `${commit} ${next} refs/heads/main\n`;
    const [allowed, pre, post] = rails.requests.map((r) => r.body);
    expect(allowed).toMatchObject({
      action: 'git-receive-pack',
      gl_repository: 'project-7',
      project: join(g.storage, REPO),
      changes,
      protocol: 'ssh',
      user_id: '7',
      push_options: ['ci.skip', 'merge_request.create'],
    });
    const env = JSON.parse(allowed?.env as string);
    expect(env.GIT_OBJECT_DIRECTORY_RELATIVE).toMatch(/^objects\/(tmp_objdir-)?incoming-\w+$/);
    expect(env.GIT_ALTERNATE_OBJECT_DIRECTORIES_RELATIVE).toEqual(['objects']);
    expect(pre).toEqual({ gl_repository: 'project-7' });
    expect(post).toEqual({
      gl_repository: 'project-7',
      identifier: 'user-7',
      changes,
      push_options: ['ci.skip', 'merge_request.create'],
    });

    // git pads sideband lines with spaces (to clear the terminal line); compare without them.
    const stderr = res.stderr.replace(/ +$/gm, '');
    const rule = '='.repeat(72);
    expect(stderr).toContain(
      [
        'remote:',
        'remote: To create a merge request, visit:',
        'remote:   http://example.test/mr',
        `remote: ${rule}`,
        'remote:',
        `remote: ${' '.repeat(29)}Project moved!`,
        'remote:',
        `remote: ${rule}`,
        'To ssh://',
      ].join('\n'),
    );
  });

  it('shows the /allowed denial and leaves the refs unchanged', async () => {
    rails.answers.allowed = {
      status: 200,
      body: {
        status: false,
        message: 'You are not allowed to push code to protected branches on this project.',
      },
    };
    const { work } = await cloneAndCommit();
    const res = await run('git', ['push', 'origin', 'main'], { cwd: work, env: sshEnv() });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    expect(res.stderr).toContain('! [remote rejected] main -> main (pre-receive hook declined)');
    expect(await bareHead()).toBe(commit);
    expect(rails.requests.map((r) => r.path)).toEqual(['allowed']);
  });

  it('rejects the push when the internal API is unreachable', async () => {
    await rails.stop();
    const { work } = await cloneAndCommit();
    const res = await run('git', ['push', 'origin', 'main'], { cwd: work, env: sshEnv() });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('remote: GitLab: Internal API unreachable');
    expect(await bareHead()).toBe(commit);
    rails = new FakeRails();
    await rails.start();
  });

  it('keeps a push whose post-receive call fails, with a warning', async () => {
    rails.answers.post_receive = { status: 500, body: { message: 'boom' } };
    const { work, next } = await cloneAndCommit();
    const res = await run('git', ['push', 'origin', 'main'], { cwd: work, env: sshEnv() });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('remote: GitLab: warning: post-receive: boom');
    expect(await bareHead()).toBe(next);
  });

  it('passes key-based identities as key_id', async () => {
    const { work } = await cloneAndCommit();
    await git(['push', 'origin', 'main'], { cwd: work, env: sshEnv({ FAKE_SSH_GL_ID: 'key-42' }) });
    expect(rails.requests[0]?.body).toMatchObject({ key_id: '42' });
    expect(rails.requests[0]?.body).not.toHaveProperty('user_id');
  });
});

describe('git archive --remote (upload-archive)', () => {
  it('produces a tar of the tree', async () => {
    const dir = tempDir();
    const tar = join(dir, 'out.tar');
    const res = await run('git', ['archive', `--remote=${url}`, '--format=tar', '-o', tar, 'HEAD'], {
      cwd: dir,
      env: sshEnv(),
    });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const list = await run('tar', ['tf', tar]);
    expect(list.stdout.toString().split('\n').filter(Boolean).sort()).toEqual([
      'README.md',
      'docs/',
      'docs/guide.md',
    ]);
  });
});

describe('main', () => {
  function startMain(config: Record<string, unknown>, env: Record<string, string> = {}) {
    const dir = tempDir();
    const file = join(dir, 'gitaly.json');
    writeFileSync(file, JSON.stringify(config));
    const child = spawn(process.execPath, [programs.path('mock-gitaly/main.ts'), '--config', file], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    return { child, exited, out: () => stdout, err: () => stderr };
  }

  function validConfig(): Record<string, unknown> {
    const dir = tempDir();
    const storage = join(dir, 'storage');
    mkdirSync(storage);
    return {
      listen: '127.0.0.1:0',
      storages: { default: storage },
      tokenFile: writeSecret(dir, 'token', 'gitaly-token'),
      gitlabUrl: 'http://127.0.0.1:3001',
      gitlabSecretFile: writeSecret(dir, 'shell', SHELL_SECRET),
    };
  }

  it('logs listening with the bound address and exits 0 on SIGTERM', async () => {
    const main = startMain(validConfig());
    const deadline = Date.now() + 15_000;
    while (!main.out().includes('"listening"') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const line = JSON.parse(
      main
        .out()
        .split('\n')
        .find((l) => l.includes('"listening"')) ?? '{}',
    );
    expect(line.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    main.child.kill('SIGTERM');
    expect(await main.exited).toBe(0);
    expect(main.out()).not.toContain('gitaly-token');
  });

  it('exits 78 naming the bad setting', async () => {
    const main = startMain({ ...validConfig(), storages: { default: 'relative/dir' } });
    expect(await main.exited).toBe(78);
    expect(main.err()).toMatch(/storages .*"default".*absolute path/);
  });

  it('takes env overrides (GITALY_*)', async () => {
    const main = startMain(validConfig(), { GITALY_UPLOAD_PACK_NEGOTIATION_TIMEOUT_MS: 'soon' });
    expect(await main.exited).toBe(78);
    expect(main.err()).toContain('GITALY_UPLOAD_PACK_NEGOTIATION_TIMEOUT_MS');
  });
});
