import { describe, expect, it } from 'vitest';
import { parseCommand, splitShellWords } from './command.js';

describe('splitShellWords', () => {
  it.each([
    ["git-upload-pack '/my-company/my-project.git'", ['git-upload-pack', '/my-company/my-project.git']],
    ['git-upload-pack "a b/c.git"', ['git-upload-pack', 'a b/c.git']],
    ['git-upload-pack a\\ b/c', ['git-upload-pack', 'a b/c']],
    ['  spaced\t out  ', ['spaced', 'out']],
    ["it''s", ['its']],
    ["''", ['']],
    ['"say \\"hi\\" \\n"', ['say "hi" \\n']],
    ['', []],
  ])('splits %j', (line, words) => {
    expect(splitShellWords(line)).toEqual(words);
  });

  it.each(["'open", '"open', 'trailing\\'])('refuses %j', (line) => {
    expect(splitShellWords(line)).toBeUndefined();
  });
});

describe('parseCommand', () => {
  it('parses the three git services as git sends them', () => {
    expect(parseCommand("git-upload-pack '/g/p.git'")).toEqual({
      ok: true,
      command: { name: 'git-upload-pack', args: ['/g/p.git'] },
    });
    expect(parseCommand("git-receive-pack 'g/p.git'")).toMatchObject({
      command: { name: 'git-receive-pack' },
    });
    expect(parseCommand("git-upload-archive 'g/p.git'")).toMatchObject({
      command: { name: 'git-upload-archive' },
    });
  });

  it('folds "git upload-pack" into git-upload-pack', () => {
    expect(parseCommand('git upload-pack g/p.git')).toMatchObject({
      command: { name: 'git-upload-pack', args: ['g/p.git'] },
    });
  });

  it('maps no command and "discover" to the welcome message', () => {
    expect(parseCommand('')).toEqual({ ok: true, command: { name: 'discover', args: [] } });
    expect(parseCommand('discover')).toEqual({ ok: true, command: { name: 'discover', args: [] } });
  });

  it('passes the account commands their words as they come', () => {
    expect(parseCommand('personal_access_token ci api,read_user 7')).toEqual({
      ok: true,
      command: { name: 'personal_access_token', args: ['ci', 'api,read_user', '7'] },
    });
    expect(parseCommand('2fa_recovery_codes')).toMatchObject({
      command: { name: '2fa_recovery_codes', args: [] },
    });
    expect(parseCommand('2fa_verify')).toMatchObject({ command: { name: '2fa_verify' } });
    expect(parseCommand("git-lfs-authenticate 'g/p.git' download")).toMatchObject({
      command: { name: 'git-lfs-authenticate', args: ['g/p.git', 'download'] },
    });
  });

  it('refuses unknown commands with 128 and the whole line', () => {
    expect(parseCommand('rm -rf /')).toEqual({
      ok: false,
      exitCode: 128,
      message: 'Unknown command: rm -rf /',
    });
    expect(parseCommand('git-lfs-transfer g/p download')).toMatchObject({ exitCode: 128 });
  });

  it('refuses git commands without exactly one argument with 1 ("Disallowed command")', () => {
    expect(parseCommand('git-upload-pack')).toEqual({
      ok: false,
      exitCode: 1,
      message: 'Disallowed command',
    });
    expect(parseCommand('git-upload-pack a/b c/d')).toMatchObject({ exitCode: 1 });
  });

  it('refuses unparsable lines with 128', () => {
    expect(parseCommand("git-upload-pack 'x")).toMatchObject({
      ok: false,
      exitCode: 128,
      message: 'Failed to parse command: Invalid SSH command: invalid command line string',
    });
  });
});
