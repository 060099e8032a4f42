import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitInspector } from './git.js';
import { tempDir } from './test-support/fixtures.js';
import { createBareRepo, type RepoCommits } from './test-support/git-repo.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let c: RepoCommits;

beforeAll(() => {
  tmp = tempDir();
  repo = join(tmp.dir, 'repo.git');
  c = createBareRepo(repo);
});
afterAll(() => tmp.cleanup());

describe('GitInspector.isAncestor', () => {
  const git = createGitInspector();

  it('tells ancestors from diverged commits', async () => {
    expect(await git.isAncestor(repo, c.A, c.B)).toBe(true);
    expect(await git.isAncestor(repo, c.B, c.B)).toBe(true);
    expect(await git.isAncestor(repo, c.B, c.C)).toBe(false);
  });

  it('fails with CELL_GIT_FAILED for unknown objects', async () => {
    await expect(git.isAncestor(repo, c.A, 'f'.repeat(40))).rejects.toMatchObject({
      code: 'CELL_GIT_FAILED',
    });
  });

  it('fails with CELL_GIT_TIMEOUT when git hangs', async () => {
    const slow = join(tmp.dir, 'slow-git');
    writeFileSync(slow, '#!/bin/sh\nexec sleep 5\n');
    chmodSync(slow, 0o755);
    const hanging = createGitInspector({ gitBinary: slow, timeoutMs: 100 });
    const started = Date.now();
    await expect(hanging.isAncestor(repo, c.A, c.B)).rejects.toMatchObject({
      code: 'CELL_GIT_TIMEOUT',
      statusCode: 503,
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
