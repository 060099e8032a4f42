import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { AccessMessages } from '../access.js';
import { demoModel, shellHeaders, tempDir, testApp } from '../test-support/fixtures.js';
import { createBareRepo, quarantineCommit, type RepoCommits } from '../test-support/git-repo.js';
import type { TopologyModel } from '../topology.js';
import { AccessLevel } from '../topology-types.js';

/**
 * Protected-branch, force-push and delete decisions of `/allowed` as the Gitaly pre-receive hook
 * calls it, against a real bare repository (force pushes are detected with git merge-base).
 */

const ZERO = '0'.repeat(40);
const USER_ID = { alice: '2', carol: '4', dave: '5' } as const;

let tmp: ReturnType<typeof tempDir>;
let model: TopologyModel;
let app: FastifyInstance;
let repoDir: string;
let c: RepoCommits;

beforeAll(() => {
  tmp = tempDir();
  model = demoModel(tmp.dir, (t) => {
    const project = t.projects.find((p) => p.path === 'my-project')!;
    project.protectedBranches.push(
      { name: 'release/*', pushAccessLevel: AccessLevel.developer, allowForcePush: true },
      { name: 'stable', pushAccessLevel: 0, allowForcePush: false },
    );
  });
  repoDir = model.repositoryDir(model.projectById(3)!)!;
  c = createBareRepo(repoDir);
  app = testApp(model, 'cell_eu0');
});

afterAll(async () => {
  await app.close();
  tmp.cleanup();
});

async function push(user: keyof typeof USER_ID, changes: string, extra: Record<string, unknown> = {}) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/internal/allowed',
    headers: await shellHeaders(),
    payload: {
      action: 'git-receive-pack',
      gl_repository: 'project-3',
      project: hashedRepoPath(3),
      changes,
      protocol: 'ssh',
      user_id: USER_ID[user],
      env: JSON.stringify({ GIT_ALTERNATE_OBJECT_DIRECTORIES_RELATIVE: [] }),
      push_options: [],
      ...extra,
    },
  });
  return { status: res.statusCode, body: res.json() };
}

const denied = (message: string) => ({ status: 401, body: { status: false, message } });

describe('pushes to the protected default branch (Maintainers push, no force push)', () => {
  it('lets a Maintainer fast-forward main', async () => {
    expect((await push('dave', `${c.A} ${c.B} refs/heads/main`)).status).toBe(200);
  });

  it('refuses a force push to main, even to a Maintainer', async () => {
    expect(await push('dave', `${c.B} ${c.C} refs/heads/main`)).toMatchObject(
      denied(AccessMessages.forcePushProtectedBranch),
    );
    expect(AccessMessages.forcePushProtectedBranch).toBe(
      'You are not allowed to force push code to a protected branch on this project.',
    );
  });

  it('refuses a Developer any push to main, telling a force push first', async () => {
    expect(await push('alice', `${c.A} ${c.B} refs/heads/main`)).toMatchObject(
      denied('You are not allowed to push code to protected branches on this project.'),
    );
    expect(await push('alice', `${c.B} ${c.C} refs/heads/main`)).toMatchObject(
      denied(AccessMessages.forcePushProtectedBranch),
    );
  });

  it('refuses deleting the default branch to everyone', async () => {
    for (const user of ['alice', 'dave'] as const) {
      expect(await push(user, `${c.B} ${ZERO} refs/heads/main`)).toMatchObject(
        denied('The default branch of a project cannot be deleted.'),
      );
    }
  });
});

describe('other branches and tags', () => {
  it('lets a Developer create, force-push and delete an unprotected branch', async () => {
    expect((await push('alice', `${ZERO} ${c.C} refs/heads/feature/x`)).status).toBe(200);
    expect((await push('alice', `${c.C} ${c.B} refs/heads/feature/x`)).status).toBe(200);
    expect((await push('alice', `${c.B} ${ZERO} refs/heads/feature/x`)).status).toBe(200);
  });

  it('lets a Developer push tags and refuses a Reporter any push', async () => {
    expect((await push('alice', `${ZERO} ${c.B} refs/tags/v1.0`)).status).toBe(200);
    expect((await push('alice', `${c.B} ${ZERO} refs/tags/v1.0`)).status).toBe(200);
    expect(await push('carol', `${ZERO} ${c.B} refs/heads/feature/y`)).toMatchObject(
      denied('You are not allowed to push code to this project.'),
    );
  });

  it('applies wildcard rules: release/* allows Developers and force pushes, but not deletion', async () => {
    expect((await push('alice', `${ZERO} ${c.B} refs/heads/release/1.0`)).status).toBe(200);
    expect((await push('alice', `${c.B} ${c.C} refs/heads/release/1.0`)).status).toBe(200);
    expect(await push('alice', `${c.C} ${ZERO} refs/heads/release/1.0`)).toMatchObject(
      denied(
        'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
      ),
    );
    expect(await push('dave', `${c.C} ${ZERO} refs/heads/release/1.0`)).toMatchObject(
      denied('You can only delete protected branches using the web interface.'),
    );
  });

  it('applies "no one" push rules to creation and update', async () => {
    expect(await push('dave', `${ZERO} ${c.B} refs/heads/stable`)).toMatchObject(
      denied('You are not allowed to create protected branches on this project.'),
    );
    expect(await push('dave', `${c.A} ${c.B} refs/heads/stable`)).toMatchObject(
      denied(AccessMessages.pushProtectedBranch),
    );
  });

  it('refuses 40-hex branch names', async () => {
    expect(await push('alice', `${ZERO} ${c.B} refs/heads/${c.A}`)).toMatchObject(
      denied(AccessMessages.hexBranchName),
    );
  });

  it('refuses the whole push when one of several changes is refused', async () => {
    const changes = `${ZERO} ${c.C} refs/heads/feature/ok\n${c.A} ${c.B} refs/heads/main\n`;
    expect(await push('alice', changes)).toMatchObject(denied(AccessMessages.pushProtectedBranch));
  });

  it('answers 400 for malformed changes', async () => {
    const res = await push('alice', 'not a change line');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      status: false,
      message: expect.stringMatching(/^changes: malformed line/),
    });
  });
});

describe('quarantined objects (receive-pack before the refs move)', () => {
  const QUARANTINE = 'objects/incoming-test1';
  const env = JSON.stringify({
    GIT_OBJECT_DIRECTORY_RELATIVE: QUARANTINE,
    GIT_ALTERNATE_OBJECT_DIRECTORIES_RELATIVE: [],
  });

  it('inspects commits that exist only in the quarantine directory', async () => {
    const forced = quarantineCommit(repoDir, QUARANTINE, c.B, c.C);
    const fastForward = quarantineCommit(repoDir, QUARANTINE, c.B, c.B);
    expect(await push('dave', `${c.B} ${forced} refs/heads/main`, { env })).toMatchObject(
      denied(AccessMessages.forcePushProtectedBranch),
    );
    expect((await push('dave', `${c.B} ${fastForward} refs/heads/main`, { env })).status).toBe(200);
    // Without the quarantine directory git cannot see the new commit: a server error, not a decision.
    expect(await push('dave', `${c.B} ${fastForward} refs/heads/main`)).toEqual({
      status: 500,
      body: { status: false, message: '500 Internal Server Error' },
    });
  });

  it('refuses object directories outside the repository', async () => {
    const outside = JSON.stringify({ GIT_OBJECT_DIRECTORY_RELATIVE: '../../../../etc' });
    const res = await push('dave', `${c.A} ${c.B} refs/heads/main`, { env: outside });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/leaves the repository/);
  });
});
