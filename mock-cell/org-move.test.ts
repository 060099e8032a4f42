import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashedRepoPath } from '../lib/repo-path.js';
import { learn } from './learn.js';
import { moveOrganization } from './org-move.js';
import { demoModel, shellHeaders, tempDir, testApp } from './test-support/fixtures.js';
import { createBareRepo, git } from './test-support/git-repo.js';

let cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** A demo model over real storages in a temp folder, with bare repositories for projects 3 and 4 in cell_eu0. */
function setup() {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const model = demoModel(tmp.dir);
  const repo = (cell: string, id: number) => join(tmp.dir, cell, hashedRepoPath(id));
  const commits = createBareRepo(repo('cell_eu0', 3));
  createBareRepo(repo('cell_eu0', 4));
  return { dir: tmp.dir, model, repo, commits };
}

describe('moveOrganization', () => {
  it("moves every project's repository to the new cell's storage and switches the model", async () => {
    const { model, repo, commits } = setup();
    const result = await moveOrganization(model, 'my-organization', 'cell_eu1');
    expect(result).toEqual({
      organization: 'my-organization',
      from: 'cell_eu0',
      to: 'cell_eu1',
      repositories: [
        { project: 'my-company/my-project', relative_path: hashedRepoPath(3), moved: true },
        { project: 'my-company/my-other-project', relative_path: hashedRepoPath(4), moved: true },
        { project: 'john.doe/notes', relative_path: hashedRepoPath(6), moved: false },
      ],
    });
    expect(existsSync(repo('cell_eu0', 3))).toBe(false);
    expect(git(repo('cell_eu1', 3), ['rev-parse', 'main'])).toBe(commits.B);
    expect(git(repo('cell_eu1', 3), ['fsck', '--no-progress'])).toBe('');
    expect(model.repositoryDir(model.projectById(3)!)).toBe(repo('cell_eu1', 3));
    expect(learn(model, '/my-company/my-project').cell).toBe('cell_eu1');
  });

  it('reports projects without a repository as not moved', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const model = demoModel(tmp.dir);
    const result = await moveOrganization(model, 'not-my-organization', 'cell_eu1');
    expect(result.repositories).toEqual([
      { project: 'not-my-company/not-my-project', relative_path: hashedRepoPath(5), moved: false },
      { project: 'acme.corp/www.site', relative_path: hashedRepoPath(7), moved: false },
    ]);
    expect(model.organization('not-my-organization')?.cell).toBe('cell_eu1');
  });

  it('refuses to overwrite a repository at the target, moving nothing', async () => {
    const { model, repo } = setup();
    mkdirSync(repo('cell_eu1', 4), { recursive: true });
    await expect(moveOrganization(model, 'my-organization', 'cell_eu1')).rejects.toMatchObject({
      code: 'CELL_CONFLICT',
      statusCode: 409,
    });
    expect(existsSync(repo('cell_eu0', 3))).toBe(true);
    expect(model.organization('my-organization')?.cell).toBe('cell_eu0');
  });

  it('puts moved repositories back when a later one fails', async () => {
    const { model, repo } = setup();
    const parentOf4 = dirname(dirname(repo('cell_eu1', 4)));
    expect(parentOf4).not.toBe(dirname(dirname(repo('cell_eu1', 3))));
    mkdirSync(dirname(parentOf4), { recursive: true });
    writeFileSync(parentOf4, 'not a folder');
    await expect(moveOrganization(model, 'my-organization', 'cell_eu1')).rejects.toMatchObject({
      code: 'CELL_REPOSITORY_MOVE_FAILED',
    });
    expect(existsSync(repo('cell_eu0', 3))).toBe(true);
    expect(existsSync(repo('cell_eu1', 3))).toBe(false);
    expect(model.organization('my-organization')?.cell).toBe('cell_eu0');
  });

  it('refuses unknown organizations and cells', async () => {
    const { model } = setup();
    await expect(moveOrganization(model, 'nope', 'cell_eu1')).rejects.toMatchObject({ statusCode: 404 });
    await expect(moveOrganization(model, 'my-organization', 'cell_xx')).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});

describe('POST /api/v4/internal/admin/organizations/:path/move', () => {
  it('moves the organization for every cell of the process at once', async () => {
    const { model, repo } = setup();
    const eu0 = testApp(model, 'cell_eu0');
    const eu1 = testApp(model, 'cell_eu1');
    cleanups.push(() => Promise.all([eu0.close(), eu1.close()]));
    const url = '/api/v4/internal/admin/organizations/my-organization/move';
    expect((await eu0.inject({ method: 'POST', url, payload: { cell: 'cell_eu1' } })).statusCode).toBe(401);

    const res = await eu0.inject({
      method: 'POST',
      url,
      headers: await shellHeaders(),
      payload: { cell: 'cell_eu1' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ from: 'cell_eu0', to: 'cell_eu1' });
    expect(existsSync(repo('cell_eu1', 3))).toBe(true);

    const allowed = async (app: typeof eu0) =>
      app.inject({
        method: 'POST',
        url: '/api/v4/internal/allowed',
        headers: { 'content-type': 'application/json', ...(await shellHeaders()) },
        payload: {
          action: 'git-upload-pack',
          project: 'my-company/my-project.git',
          key_id: 2,
          changes: '_any',
        },
      });
    const old = await allowed(eu0);
    expect(old.statusCode).toBe(421);
    expect(old.headers['x-gitlab-cell-redirect']).toBe('cell_eu1');
    expect((await allowed(eu1)).statusCode).toBe(200);

    const bad = await eu1.inject({ method: 'POST', url, headers: await shellHeaders(), payload: {} });
    expect(bad.statusCode).toBe(400);
    const unknown = await eu1.inject({
      method: 'POST',
      url: '/api/v4/internal/admin/organizations/nope/move',
      headers: await shellHeaders(),
      payload: { cell: 'cell_eu0' },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toMatch(/no organization with path "nope"/);
  });
});
