import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { commitRandomFiles, GIT_IDENTITY, killPushMidTransfer } from '../helpers/interrupted-push.js';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

let stack: RunningStack;
let work: string;

beforeAll(async () => {
  stack = await startStack();
  work = mkdtempSync(join(tmpdir(), 'push-e2e-'));
});

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const identity = GIT_IDENTITY;

function git(user: string, args: string[], cwd = work, timeoutMs = 120_000) {
  return run('git', args, { cwd, env: { ...stack.gitEnv(user), ...identity }, timeoutMs });
}

async function bareRefs(path: string): Promise<string> {
  return runOk('git', [
    '--git-dir',
    stack.project(path).repository,
    'for-each-ref',
    '--format=%(objectname) %(refname)',
  ]);
}

let seq = 0;
async function cloneAs(user: string, path: string): Promise<string> {
  const dir = join(work, `${user}-${++seq}`);
  const r = await git(user, ['clone', '-q', stack.url(path), dir]);
  if (r.code !== 0) throw new Error(`clone failed: ${r.stderr}`);
  return dir;
}

async function commitFile(
  dir: string,
  file: string,
  content: string | Buffer,
  message: string,
): Promise<string> {
  writeFileSync(join(dir, file), content);
  await runOk('git', ['-C', dir, 'add', file], { env: { ...process.env, ...identity } });
  await runOk('git', ['-C', dir, 'commit', '-q', '-m', message], { env: { ...process.env, ...identity } });
  return (await runOk('git', ['-C', dir, 'rev-parse', 'HEAD'])).trim();
}

describe('push through router → bridge → Gitaly with GitLab’s access rules', () => {
  it('pushes a new branch, shows the merge request hint, and a fresh clone has it', async () => {
    const dir = await cloneAs('alice', 'my-company/my-project');
    await runOk('git', ['-C', dir, 'checkout', '-q', '-b', 'topic/e2e']);
    const sha = await commitFile(dir, 'topic.txt', 'topic\n', 'Add topic');
    const r = await git('alice', ['-C', dir, 'push', 'origin', 'topic/e2e']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('remote: To create a merge request for topic/e2e, visit:');
    expect(r.stderr).toMatch(/merge_requests\/new\?merge_request%5Bsource_branch%5D=topic%2Fe2e/);
    expect(await bareRefs('my-company/my-project')).toContain(`${sha} refs/heads/topic/e2e`);
    const again = await cloneAs('alice', 'my-company/my-project');
    expect((await runOk('git', ['-C', again, 'rev-parse', 'origin/topic/e2e'])).trim()).toBe(sha);
  });

  it('fast-forwards protected main as a maintainer', async () => {
    const dir = await cloneAs('dave', 'my-company/my-project');
    const sha = await commitFile(dir, 'ff.txt', 'ff\n', 'Fast-forward main');
    const r = await git('dave', ['-C', dir, 'push', 'origin', 'main']);
    expect(r.code).toBe(0);
    expect(await bareRefs('my-company/my-project')).toContain(`${sha} refs/heads/main`);
  });

  it('rejects a developer’s push to protected main with the cell’s message and leaves refs unchanged', async () => {
    const before = await bareRefs('my-company/my-project');
    const dir = await cloneAs('alice', 'my-company/my-project');
    await commitFile(dir, 'nope.txt', 'nope\n', 'Developer on main');
    const r = await git('alice', ['-C', dir, 'push', 'origin', 'main']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('You are not allowed to push code to protected branches on this project.');
    expect(r.stderr).toMatch(/\[remote rejected\] main -> main \(pre-receive hook declined\)/);
    expect(await bareRefs('my-company/my-project')).toBe(before);
  });

  it('refuses a force push to protected main even for a maintainer', async () => {
    const before = await bareRefs('gitlab-org/gitlab-test');
    const dir = await cloneAs('bob', 'gitlab-org/gitlab-test');
    await runOk('git', ['-C', dir, 'reset', '-q', '--hard', 'HEAD~1']);
    await commitFile(dir, 'rewrite.txt', 'rewrite\n', 'Rewrite history');
    const r = await git('bob', ['-C', dir, 'push', '--force', 'origin', 'main']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'You are not allowed to force push code to a protected branch on this project.',
    );
    expect(await bareRefs('gitlab-org/gitlab-test')).toBe(before);
  });

  it('force-pushes an unprotected branch and deletes a branch', async () => {
    const dir = await cloneAs('alice', 'my-company/my-project');
    await runOk('git', ['-C', dir, 'checkout', '-q', '-b', 'rewrite-me', 'origin/feature/login']);
    await git('alice', ['-C', dir, 'push', '-q', 'origin', 'rewrite-me']);
    await runOk('git', ['-C', dir, 'reset', '-q', '--hard', 'HEAD~1']);
    const sha = await commitFile(dir, 'other.txt', 'other\n', 'Divergent');
    const forced = await git('alice', ['-C', dir, 'push', '--force', 'origin', 'rewrite-me']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toMatch(/\+ [0-9a-f]+\.\.\.[0-9a-f]+ rewrite-me -> rewrite-me \(forced update\)/);
    expect(await bareRefs('my-company/my-project')).toContain(`${sha} refs/heads/rewrite-me`);
    const deleted = await git('alice', ['-C', dir, 'push', 'origin', '--delete', 'rewrite-me']);
    expect(deleted.code).toBe(0);
    expect(await bareRefs('my-company/my-project')).not.toContain('refs/heads/rewrite-me');
  });

  it('pushes tags', async () => {
    const dir = await cloneAs('alice', 'my-company/my-project');
    await runOk('git', ['-C', dir, 'tag', '-a', 'v9.9.9', '-m', 'e2e tag'], {
      env: { ...process.env, ...identity },
    });
    await runOk('git', ['-C', dir, 'tag', 'light-e2e']);
    const r = await git('alice', ['-C', dir, 'push', 'origin', '--tags']);
    expect(r.code).toBe(0);
    const refs = await bareRefs('my-company/my-project');
    expect(refs).toContain('refs/tags/v9.9.9');
    expect(refs).toContain('refs/tags/light-e2e');
  });

  it('delivers push options to the hooks', async () => {
    const dir = await cloneAs('alice', 'my-company/my-project');
    await runOk('git', ['-C', dir, 'checkout', '-q', '-b', 'with-options']);
    await commitFile(dir, 'opts.txt', 'opts\n', 'Push options');
    const r = await git('alice', [
      '-C',
      dir,
      'push',
      '-o',
      'ci.skip',
      '-o',
      'merge_request.create',
      'origin',
      'with-options',
    ]);
    expect(r.code).toBe(0);
    const cell = stack.json.cells.find((c) => c.name === 'cell_eu0');
    const token = await signShellJwt(jwtKey(readSecretFile(stack.json.secrets.shell)));
    const res = await fetch(`${cell?.rails}/api/v4/internal/_test/hook-calls`, {
      headers: { 'Gitlab-Shell-Api-Request': token },
    });
    expect(res.status).toBe(200);
    const calls = JSON.stringify(await res.json());
    expect(calls).toMatch(/with-options/);
    expect(calls).toMatch(/ci\.skip/);
    expect(calls).toMatch(/merge_request\.create/);
  });

  it('denies a reporter at /allowed with the message and ssh exit status 1', async () => {
    const ssh = stack.sshCommand('carol').split(' ');
    const direct = await run(
      ssh[0] as string,
      [
        ...ssh.slice(1),
        '-p',
        String(stack.sshPort),
        'git@127.0.0.1',
        "git-receive-pack 'my-company/my-project.git'",
      ],
      { env: stack.gitEnv('carol'), timeoutMs: 20_000 },
    );
    expect(direct.code).toBe(1);
    expect(direct.stderr).toContain('You are not allowed to push code to this project.');
    const dir = await cloneAs('carol', 'my-company/my-project');
    await commitFile(dir, 'reporter.txt', 'r\n', 'Reporter push');
    const pushed = await git('carol', ['-C', dir, 'push', 'origin', 'HEAD:refs/heads/reporter']);
    expect(pushed.code).toBe(128);
    expect(pushed.stderr).toContain('You are not allowed to push code to this project.');
  });

  it('pushes 50 MiB of random blobs and the cell has every object', async () => {
    const dir = await cloneAs('alice', 'my-company/my-project');
    await runOk('git', ['-C', dir, 'checkout', '-q', '-b', 'big-blobs']);
    await mkdir(join(dir, 'blobs'));
    for (let i = 0; i < 50; i++) writeFileSync(join(dir, 'blobs', `b${i}.bin`), randomBytes(1024 * 1024));
    await runOk('git', ['-C', dir, 'add', 'blobs'], { env: { ...process.env, ...identity } });
    await runOk('git', ['-C', dir, 'commit', '-q', '-m', '50 MiB of random blobs'], {
      env: { ...process.env, ...identity },
    });
    const r = await git('alice', ['-C', dir, 'push', 'origin', 'big-blobs'], dir, 300_000);
    expect(r.code).toBe(0);
    const objects = (await runOk('git', ['-C', dir, 'rev-list', '--objects', 'origin/main..big-blobs']))
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0])
      .join('\n');
    expect(objects.split('\n').length).toBeGreaterThanOrEqual(52);
    const check = await runOk(
      'git',
      [
        '--git-dir',
        stack.project('my-company/my-project').repository,
        'cat-file',
        '--batch-check=%(objectname) %(objecttype)',
      ],
      { input: `${objects}\n` },
    );
    expect(check).not.toContain('missing');
    expect(check.trim().split('\n').length).toBe(objects.split('\n').length);
  });

  it('leaves refs unchanged and no git process behind when the pushing client is killed mid-transfer', async () => {
    const before = await bareRefs('my-company/my-project');
    const dir = await cloneAs('alice', 'my-company/my-project');
    await commitRandomFiles(dir, 'interrupted', 40);
    await killPushMidTransfer(stack, 'alice', dir, 'interrupted', 5_000);
    expect(await bareRefs('my-company/my-project')).toBe(before);
  });
});

describe('git archive --remote', () => {
  it('lists the tree of HEAD as a tar stream', async () => {
    const out = join(work, 'archive.tar');
    const r = await run(
      'sh',
      ['-c', `git archive --remote=${stack.url('gitlab-org/gitlab-test')} --format=tar HEAD > ${out}`],
      {
        env: stack.gitEnv('bob'),
      },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const list = await runOk('tar', ['tf', out]);
    expect(list.split('\n')).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'src/app.txt']));
  });

  it('answers a project the user cannot read with a clean error', async () => {
    const r = await run(
      'git',
      ['archive', `--remote=${stack.url('my-company/my-other-project')}`, '--format=tar', 'HEAD'],
      {
        env: stack.gitEnv('alice'),
      },
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      "The project you were looking for could not be found or you don't have permission to view it.",
    );
  });
});
