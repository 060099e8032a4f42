import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashedRepoPath, normalizeProjectPath, resolveInStorage } from './repo-path.js';

describe('hashedRepoPath', () => {
  it('uses the SHA-256 of the project id like GitLab', () => {
    // printf 1 | sha256sum
    expect(hashedRepoPath(1)).toBe(
      '@hashed/6b/86/6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b.git',
    );
  });
});

describe('resolveInStorage', () => {
  it('joins safe relative paths', () => {
    expect(resolveInStorage('/srv/repos', '@hashed/ab/cd/x.git')).toBe('/srv/repos/@hashed/ab/cd/x.git');
  });

  it.each(['', '../etc', 'a/../../b', '/etc/passwd', 'a/..', 'x\0y', '.'])('refuses %j', (p) => {
    expect(resolveInStorage('/srv/repos', p)).toBeUndefined();
  });

  it('never returns a path outside the storage', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', '..', '.', '/', 'b.git', '%2e'), { maxLength: 8 }),
        (parts) => {
          const out = resolveInStorage('/srv/repos', parts.join(''));
          if (out !== undefined) expect(out.startsWith('/srv/repos/')).toBe(true);
        },
      ),
    );
  });
});

describe('normalizeProjectPath', () => {
  it.each([
    ['/my-company/my-project.git', 'my-company/my-project'],
    ['my-company/my-project', 'my-company/my-project'],
    ['group/sub/project.git/', 'group/sub/project'],
    ['john.doe/dotted.repo.git', 'john.doe/dotted.repo'],
  ])('%s → %s', (raw, want) => {
    expect(normalizeProjectPath(raw)).toBe(want);
  });

  it.each([
    '',
    '/',
    '.git',
    'project.git',
    '../etc/passwd',
    'a/../b',
    'a//b',
    '~alice/x',
    'a/b c',
    'a/.hidden',
    'a/b.git.git',
  ])('rejects %j', (raw) => {
    expect(normalizeProjectPath(raw)).toBeUndefined();
  });
});
