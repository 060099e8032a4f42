import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

let stack: RunningStack;
let work: string;

beforeAll(async () => {
  stack = await startStack();
  work = mkdtempSync(join(tmpdir(), 'clone-e2e-'));
});

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Every ref of a bare repository as "sha ref" lines, sorted. */
async function refsOf(gitDir: string): Promise<string> {
  return runOk('git', [
    '--git-dir',
    gitDir,
    'for-each-ref',
    '--format=%(objectname) %(refname)',
    '--sort=refname',
  ]);
}

function git(user: string, args: string[], cwd = work) {
  return run('git', args, { cwd, env: stack.gitEnv(user), timeoutMs: 60_000 });
}

let seq = 0;
const dest = (name: string) => join(work, `${name}-${++seq}`);

describe('clone through router → bridge → mock cell → Gitaly', () => {
  it.each([
    ['alice', 'my-company/my-project', '2'],
    ['alice', 'my-company/my-project', '0'],
    ['alice', 'gitlab-org/gitlab-test', '2'],
    ['bob', 'gitlab-org/gitlab', '0'],
    ['root', 'not-my-company/not-my-project', '2'],
  ])(
    '%s mirrors %s with protocol v%s and gets every ref of the bare repository',
    async (user, path, version) => {
      const target = dest('mirror');
      const r = await git(user, [
        '-c',
        `protocol.version=${version}`,
        'clone',
        '--mirror',
        stack.url(path),
        target,
      ]);
      expect(r.stderr).not.toMatch(/fatal|error/i);
      expect(r.code).toBe(0);
      const want = await refsOf(stack.project(path).repository);
      expect(want.split('\n').length).toBeGreaterThan(4);
      expect(await refsOf(target)).toBe(want);
    },
  );

  it('serves projects from at least two cells', () => {
    const cells = new Set(
      ['my-company/my-project', 'gitlab-org/gitlab-test', 'not-my-company/not-my-project'].map(
        (p) => stack.project(p).cell,
      ),
    );
    expect(cells.size).toBe(3);
  });

  it('checks out a working tree identical to the bare repository HEAD', async () => {
    const target = dest('checkout');
    expect((await git('alice', ['clone', stack.url('my-company/my-project'), target])).code).toBe(0);
    const head = await runOk('git', ['-C', target, 'rev-parse', 'HEAD']);
    const bare = await runOk('git', [
      '--git-dir',
      stack.project('my-company/my-project').repository,
      'rev-parse',
      'main',
    ]);
    expect(head).toBe(bare);
    expect((await runOk('git', ['-C', target, 'status', '--porcelain'])).trim()).toBe('');
  });

  it('makes a shallow clone with --depth 1', async () => {
    const target = dest('shallow');
    const r = await git('alice', ['clone', '--depth', '1', stack.url('my-company/my-project'), target]);
    expect(r.code).toBe(0);
    expect((await runOk('git', ['-C', target, 'rev-list', '--count', 'HEAD'])).trim()).toBe('1');
    expect((await runOk('git', ['-C', target, 'rev-parse', '--is-shallow-repository'])).trim()).toBe('true');
  });

  it('makes a partial clone with --filter=blob:none and fetches blobs lazily through the stack', async () => {
    const target = dest('partial');
    const r = await git('alice', [
      'clone',
      '--filter=blob:none',
      '--no-checkout',
      stack.url('gitlab-org/gitlab-test'),
      target,
    ]);
    expect(r.code).toBe(0);
    expect((await runOk('git', ['-C', target, 'config', 'remote.origin.promisor'])).trim()).toBe('true');
    const missing = await runOk('git', ['-C', target, 'rev-list', '--objects', '--missing=print', 'HEAD']);
    expect(missing).toMatch(/^\?[0-9a-f]{40}/m);
    const checkout = await git('alice', ['-C', target, 'checkout', 'main']);
    expect(checkout.code).toBe(0);
    expect(await runOk('cat', [join(target, 'src', 'app.txt')])).toBe('hello from the cells demo\n');
  });

  it('lists refs with ls-remote exactly as the bare repository has them', async () => {
    const r = await git('alice', ['ls-remote', stack.url('my-company/my-project')]);
    expect(r.code).toBe(0);
    const direct = await runOk('git', ['ls-remote', stack.project('my-company/my-project').repository]);
    expect(r.stdout).toBe(direct);
  });

  it('fetches commits that land in the bare repository after the clone', async () => {
    const target = dest('fetch');
    expect((await git('bob', ['clone', stack.url('gitlab-org/gitlab'), target])).code).toBe(0);
    const bare = stack.project('gitlab-org/gitlab').repository;
    const side = dest('side');
    await runOk('git', ['clone', '-q', bare, side]);
    const env = {
      ...stack.gitEnv('bob'),
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@e',
    };
    await runOk('git', ['-C', side, 'commit', '-q', '--allow-empty', '-m', 'landed directly'], { env });
    await runOk(
      'git',
      ['-C', side, 'push', '-q', 'origin', 'HEAD:refs/heads/main', 'HEAD:refs/heads/side-branch'],
      { env },
    );
    const fetched = await git('bob', ['-C', target, 'fetch', 'origin']);
    expect(fetched.code).toBe(0);
    const want = await runOk('git', ['--git-dir', bare, 'rev-parse', 'main']);
    expect(await runOk('git', ['-C', target, 'rev-parse', 'origin/main'])).toBe(want);
    expect(await runOk('git', ['-C', target, 'rev-parse', 'origin/side-branch'])).toBe(want);
  });
});

describe('refusals', () => {
  it('answers a private project the user is not a member of with GitLab’s not-found message', async () => {
    const r = await git('alice', ['clone', stack.url('my-company/my-other-project'), dest('denied')]);
    expect(r.code).toBe(128);
    expect(r.stderr).toContain(
      "The project you were looking for could not be found or you don't have permission to view it.",
    );
  });

  it('answers a missing project exactly like a private one', async () => {
    const r = await git('alice', ['ls-remote', stack.url('my-company/does-not-exist')]);
    expect(r.code).toBe(128);
    expect(r.stderr).toContain(
      "The project you were looking for could not be found or you don't have permission to view it.",
    );
  });

  it('refuses an unknown key at authentication', async () => {
    const keyDir = mkdtempSync(join(tmpdir(), 'stranger-'));
    try {
      await runOk('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keyDir, 'id')]);
      const env = {
        ...stack.gitEnv('alice'),
        GIT_SSH_COMMAND: stack.sshCommand('alice').replace(/-i \S+/, `-i ${join(keyDir, 'id')}`),
      };
      const r = await run('git', ['ls-remote', stack.url('gitlab-org/gitlab-test')], { env, cwd: work });
      expect(r.code).toBe(128);
      expect(r.stderr).toContain('Permission denied (publickey)');
    } finally {
      await rm(keyDir, { recursive: true, force: true });
    }
  });

  it.each([
    ["git-upload-pack '../../etc/passwd.git'"],
    ["git-upload-pack ''"],
    ["git-upload-pack 'my-company'"],
    ["git-upload-pack '/my-company/../my-company/my-project.git'"],
  ])('answers the bad path in %s with a clean ERROR line', async (command) => {
    const ssh = stack.sshCommand('alice').split(' ');
    const r = await run(
      ssh[0] as string,
      [...ssh.slice(1), '-p', String(stack.sshPort), 'git@127.0.0.1', command],
      {
        env: stack.gitEnv('alice'),
        timeoutMs: 20_000,
      },
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/ERROR: /);
    expect(r.stdout).toBe('');
  });

  it('accepts a project path without .git, as GitLab does', async () => {
    const r = await git('alice', ['ls-remote', `ssh://git@127.0.0.1:${stack.sshPort}/my-company/my-project`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/refs\/heads\/main/);
  });

  it('refuses commands other than git ones with exit status 128', async () => {
    const ssh = stack.sshCommand('alice').split(' ');
    const r = await run(
      ssh[0] as string,
      [...ssh.slice(1), '-p', String(stack.sshPort), 'git@127.0.0.1', 'rm -rf /'],
      {
        env: stack.gitEnv('alice'),
        timeoutMs: 20_000,
      },
    );
    expect(r.code).toBe(128);
    expect(r.stderr).toMatch(/ERROR: /);
  });
});
