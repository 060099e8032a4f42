import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitProcess } from './git-process.js';

const ENV = { PATH: process.env.PATH ?? '', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function git(cwd: string, args: string[], input?: Buffer): Buffer {
  const r = spawnSync('git', args, { cwd, env: ENV, input, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

describe('GitProcess.kill on a receive-pack in the middle of a pack', () => {
  it('leaves no quarantine (tmp_objdir-incoming-*) in the repository', async () => {
    const root = mkdtempSync(join(tmpdir(), 'git-process-'));
    dirs.push(root);
    const src = join(root, 'src');
    const bare = join(root, 'bare.git');
    git(root, ['init', '-q', '--initial-branch=main', src]);
    git(root, ['init', '-q', '--bare', bare]);
    for (let i = 0; i < 24; i++) writeFileSync(join(src, `f${i}.bin`), randomBytes(256 * 1024));
    git(src, ['add', '.']);
    git(src, ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'files']);
    const head = git(src, ['rev-parse', 'HEAD']).toString().trim();
    const pack = git(src, ['pack-objects', '--stdout', '--revs', '-q'], Buffer.from(`${head}\n`));

    const proc = new GitProcess({ file: 'git', args: ['receive-pack', bare], env: ENV, cwd: bare });
    proc.child.stdout.resume();
    proc.child.stderr.resume();
    const exited = new Promise((resolve) => proc.child.once('close', resolve));
    proc.child.stdin.on('error', () => undefined);
    proc.child.stdin.write(`${pkt(`${'0'.repeat(40)} ${head} refs/heads/x\0report-status\n`)}0000`);
    // Half of the pack: receive-pack has made its quarantine and is unpacking into it.
    proc.child.stdin.write(pack.subarray(0, Math.floor(pack.length / 2)));
    const objects = join(bare, 'objects');
    for (let i = 0; i < 200 && !readdirSync(objects).some((n) => n.startsWith('tmp_objdir')); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(readdirSync(objects).some((n) => n.startsWith('tmp_objdir'))).toBe(true);

    proc.kill();
    await exited;
    await new Promise((r) => setTimeout(r, 200));
    expect(readdirSync(objects).filter((n) => n.startsWith('tmp_objdir'))).toEqual([]);
    expect(git(bare, ['for-each-ref']).toString()).toBe('');
  }, 30_000);
});
