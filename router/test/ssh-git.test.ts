import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, gitViaSsh, makeKeyPair, remoteUrl, ssh } from '../test-support/clients.js';
import { git } from '../test-support/git-repos.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/** Real OpenSSH + real git → the router → fake cells running real git. */
let stack: TestStack;
let work: string;

beforeAll(async () => {
  stack = await startTestStack();
  work = mkdtempSync(join(stack.dir, 'work-'));
  await Promise.all([
    stack.addProject('my-company/my-project', 'cell_eu0', {
      'README.md': 'my project\n',
      'src/a.txt': 'a\n',
    }),
    stack.addProject('my-company/my-other-project', 'cell_eu0', { 'README.md': 'other\n' }),
    stack.addProject('gitlab-org/gitlab-test', 'cell_us0', { 'README.md': 'gitlab test\n' }),
  ]);
});

afterAll(async () => {
  await stack?.close();
});

function tunnels(cell: string, endpoint: string) {
  return stack.cell(cell).requests.filter((r) => r.path.endsWith(`/${endpoint}`));
}

function learns(): number {
  return [...stack.cells.values()].reduce((n, c) => n + c.seen('/api/v4/internal/cells/learn').length, 0);
}

describe('clone, fetch and ls-remote', () => {
  it('clones with protocol v2 through the owning cell, ending the body after done + flush', async () => {
    const dest = join(work, 'v2');
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, [
        'clone',
        remoteUrl(stack.sshPort, 'my-company/my-project'),
        dest,
      ]),
    );
    expect(res.stderr).not.toMatch(/fatal/);
    expect(res.code).toBe(0);
    expect(readFileSync(join(dest, 'src/a.txt'), 'utf8')).toBe('a\n');

    const calls = tunnels('cell_eu0', 'ssh-upload-pack');
    expect(calls.length).toBeGreaterThanOrEqual(1);
    const fetch = calls.at(-1);
    expect(fetch?.headers['git-protocol']).toBe('version=2');
    expect(fetch?.headers['gitlab-cells-response-framing']).toBe('v1');
    expect(fetch?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(fetch?.glId).toBe('user-2');
    expect(fetch?.bodyEnded).toBe(true);
    expect(fetch?.body.subarray(-13).toString()).toBe('0009done\n0000');
    expect(fetch?.exitCode).toBe(0);
    // The /allowed call went to the owning cell with GitLab Shell's fields.
    const allowed = stack.cell('cell_eu0').seen('/api/v4/internal/allowed').at(-1);
    expect(JSON.parse(allowed?.body.toString() ?? '{}')).toMatchObject({
      action: 'git-upload-pack',
      project: 'my-company/my-project.git',
      key_id: '11',
      changes: '_any',
      protocol: 'ssh',
      check_ip: '127.0.0.1',
    });
  });

  it('serves a second project of the same namespace from the route cache (no learn call)', async () => {
    const before = learns();
    const hits = stack.router.metrics.routeCacheHits;
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, [
        'clone',
        remoteUrl(stack.sshPort, 'my-company/my-other-project'),
        join(work, 'other'),
      ]),
    );
    expect(res.code).toBe(0);
    expect(learns()).toBe(before);
    expect(stack.router.metrics.routeCacheHits).toBe(hits + 1);
  });

  it('clones with protocol v0 (no Git-Protocol header)', async () => {
    const dest = join(work, 'v0');
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, [
        '-c',
        'protocol.version=0',
        'clone',
        remoteUrl(stack.sshPort, 'gitlab-org/gitlab-test'),
        dest,
      ]),
    );
    expect(res.stderr).not.toMatch(/fatal/);
    expect(res.code).toBe(0);
    expect(readFileSync(join(dest, 'README.md'), 'utf8')).toBe('gitlab test\n');
    const fetch = tunnels('cell_us0', 'ssh-upload-pack').at(-1);
    expect(fetch?.headers['git-protocol']).toBeUndefined();
    expect(fetch?.body.toString()).toMatch(/0009done\n0000$/);
  });

  it('lists refs with ls-remote (v2 ls-refs is forwarded until the client ends)', async () => {
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, [
        'ls-remote',
        remoteUrl(stack.sshPort, 'my-company/my-project'),
      ]),
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^[0-9a-f]{40}\tHEAD\n[0-9a-f]{40}\trefs\/heads\/main\n$/);
    const call = tunnels('cell_eu0', 'ssh-upload-pack').at(-1);
    expect(call?.body.toString()).toContain('command=ls-refs');
    expect(call?.body.toString()).not.toContain('done');
    expect(call?.bodyEnded).toBe(true);
  });
});

describe('push', () => {
  it('pushes a branch with the two-request flow', async () => {
    const clone = join(work, 'push');
    expect(
      (
        await collect(
          gitViaSsh(stack.alice.privateKey, stack.sshPort, [
            'clone',
            remoteUrl(stack.sshPort, 'my-company/my-project'),
            clone,
          ]),
        )
      ).code,
    ).toBe(0);
    await git(['checkout', '-q', '-b', 'feature'], { cwd: clone });
    await git(['-c', 'commit.gpgsign=false', 'commit', '-q', '--allow-empty', '-m', 'feature work'], {
      cwd: clone,
    });
    const before = tunnels('cell_eu0', 'ssh-receive-pack').length;
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, ['push', 'origin', 'feature'], { cwd: clone }),
    );
    expect(res.stderr).toContain('* [new branch]      feature -> feature');
    expect(res.code).toBe(0);

    const calls = tunnels('cell_eu0', 'ssh-receive-pack').slice(before);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.body.toString()).toBe('0000');
    expect(calls[1]?.body.toString()).toMatch(/^[0-9a-f]{4}0{40} [0-9a-f]{40} refs\/heads\/feature\0/);
    expect(calls.every((c) => c.exitCode === 0)).toBe(true);
    const repo = stack.world.projects.find((p) => p.path === 'my-company/my-project')?.repo ?? '';
    const { stdout } = await git(['--git-dir', repo, 'log', '-1', '--format=%s', 'feature']);
    expect(stdout.trim()).toBe('feature work');
  });

  it('ends cleanly after the advertisement when there is nothing to push', async () => {
    const clone = join(work, 'push');
    const before = tunnels('cell_eu0', 'ssh-receive-pack').length;
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, ['push', 'origin', 'feature'], { cwd: clone }),
    );
    expect(res.stderr).toContain('Everything up-to-date');
    expect(res.code).toBe(0);
    expect(tunnels('cell_eu0', 'ssh-receive-pack').length - before).toBe(1);
  });
});

describe('archive', () => {
  it('runs git archive --remote over ssh-upload-archive', async () => {
    const res = await collect(
      gitViaSsh(stack.alice.privateKey, stack.sshPort, [
        'archive',
        `--remote=${remoteUrl(stack.sshPort, 'my-company/my-project')}`,
        '--format=tar',
        'main',
        'README.md',
      ]),
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('README.md');
    expect(res.stdout).toContain('my project\n');
    expect(tunnels('cell_eu0', 'ssh-upload-archive').at(-1)?.exitCode).toBe(0);
  });
});

describe('refusals', () => {
  it('rejects an unknown key with Permission denied (publickey)', async () => {
    const failures = stack.router.metrics.sshAuthFailures;
    const res = await collect(
      ssh(stack.stranger.privateKey, stack.sshPort, ['git-upload-pack', "'my-company/my-project.git'"]),
    );
    expect(res.code).toBe(255);
    expect(res.stderr).toContain('Permission denied (publickey)');
    expect(stack.router.metrics.sshAuthFailures).toBeGreaterThan(failures);
  });

  it('shows an /allowed denial boxed as GitLab Shell does, with exit status 1', async () => {
    stack.world.denials.set(
      'alice git-receive-pack gitlab-org/gitlab-test',
      'You are not allowed to push code to this project.',
    );
    const res = await collect(
      ssh(stack.alice.privateKey, stack.sshPort, ['git-receive-pack', "'gitlab-org/gitlab-test.git'"]),
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      [
        'remote: ',
        `remote: ${'='.repeat(72)}`,
        'remote: ',
        'remote: ERROR: You are not allowed to push code to this project.',
        '',
        'remote: ',
        `remote: ${'='.repeat(72)}`,
        'remote: ',
        '',
      ].join('\n'),
    );
  });

  it('refuses unknown commands with exit status 128', async () => {
    const res = await collect(ssh(stack.alice.privateKey, stack.sshPort, ['rm', '-rf', '/']));
    expect(res.code).toBe(128);
    expect(res.stderr).toContain('remote: ERROR: Unknown command: rm -rf /\n');
  });

  it.each([
    [
      "git-upload-pack '../../etc/passwd'",
      1,
      "ERROR: The project you were looking for could not be found or you don't have permission to view it.",
    ],
    ["git-upload-pack '~alice/project.git'", 1, 'ERROR: The project you were looking for could not be found'],
    [
      "git-upload-pack 'just-one-segment.git'",
      1,
      'ERROR: The project you were looking for could not be found',
    ],
    ['git-upload-pack', 1, 'ERROR: Disallowed command'],
    ["git-upload-pack 'a/b.git' extra", 1, 'ERROR: Disallowed command'],
    [
      "git-upload-pack 'unterminated",
      128,
      'ERROR: Failed to parse command: Invalid SSH command: invalid command line string',
    ],
  ])('answers %s with a clean error and exit %i', async (command, code, message) => {
    const res = await collect(ssh(stack.alice.privateKey, stack.sshPort, [command]));
    expect(res.code).toBe(code);
    expect(res.stderr).toContain(message);
  });
});

describe('welcome', () => {
  it('greets the key owner like GitLab does', async () => {
    const res = await collect(ssh(stack.alice.privateKey, stack.sshPort, [], ['-T']));
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('Welcome to GitLab, @alice!\n');
  });

  it('greets a key without a user as Anonymous', async () => {
    const orphan = await makeKeyPair(join(stack.dir, 'orphan'));
    stack.world.keys.push({ id: 77, userId: 999, blob: orphan.blob });
    const res = await collect(ssh(orphan.privateKey, stack.sshPort, ['discover']));
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('Welcome to GitLab, Anonymous!\n');
  });
});

describe('not framed', () => {
  it('copies a compatible-mode response to stdout and exits 0', async () => {
    stack.world.unframedCells.add('cell_us0');
    try {
      const dest = join(work, 'unframed');
      const res = await collect(
        gitViaSsh(stack.alice.privateKey, stack.sshPort, [
          'clone',
          remoteUrl(stack.sshPort, 'gitlab-org/gitlab-test'),
          dest,
        ]),
      );
      expect(res.code).toBe(0);
      expect(existsSync(join(dest, 'README.md'))).toBe(true);
    } finally {
      stack.world.unframedCells.delete('cell_us0');
      rmSync(join(work, 'unframed'), { recursive: true, force: true });
    }
  });
});
