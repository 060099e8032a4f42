import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from './proc.js';
import { ensureRepo, fileContent, keystream, type RepoSpec } from './repo-gen.js';

describe('keystream', () => {
  it('gives the same bytes for the same seed, whatever the read sizes', () => {
    const a = keystream('s1');
    const b = keystream('s1');
    const whole = a(1000);
    expect(Buffer.concat([b(10), b(990)])).toEqual(whole);
    expect(keystream('s2')(1000)).not.toEqual(whole);
  });

  it('writes text files as 64-character hex lines of the asked size', () => {
    const text = fileContent(keystream('t'), { fileBytes: 200, text: true }).toString();
    expect(text.replace(/\n/g, '')).toMatch(/^[0-9a-f]{200}$/);
    expect(text.split('\n')[0]).toHaveLength(64);
    expect(fileContent(keystream('t'), { fileBytes: 300, text: false })).toHaveLength(300);
  });
});

describe('ensureRepo', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  const spec: RepoSpec = {
    name: 't',
    seed: 'test-seed',
    files: 10,
    fileBytes: 4096,
    filesPerCommit: 4,
    text: false,
  };

  it('generates the same history in two places and reuses the cached copy', async () => {
    const a = await mkdtemp(join(tmpdir(), 'bench-gen-a-'));
    const b = await mkdtemp(join(tmpdir(), 'bench-gen-b-'));
    dirs.push(a, b);
    const first = await ensureRepo(a, spec);
    const second = await ensureRepo(b, spec);
    expect(second.head).toBe(first.head);
    expect(first.packBytes).toBeGreaterThan(spec.files * spec.fileBytes);
    const logs: string[] = [];
    const again = await ensureRepo(a, spec, { log: (l) => logs.push(l) });
    expect(again.dir).toBe(first.dir);
    expect(logs).toEqual([]);
  });

  it('adds new objects on a branch on top of a base repository', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bench-gen-c-'));
    dirs.push(dir);
    const base = await ensureRepo(dir, spec);
    const extra = await ensureRepo(dir, { ...spec, name: 'extra', seed: 'other' }, { base, branch: 'more' });
    expect(extra.branch).toBe('more');
    expect(extra.head).not.toBe(base.head);
    expect(extra.dir).not.toBe(base.dir);
  });

  it('writes a realistic history deterministically: many commits, stored mostly as deltas', async () => {
    const a = await mkdtemp(join(tmpdir(), 'bench-gen-h-'));
    const b = await mkdtemp(join(tmpdir(), 'bench-gen-i-'));
    dirs.push(a, b);
    const history: RepoSpec = {
      name: 'h',
      seed: 'history-test',
      files: 12,
      fileBytes: 3000,
      filesPerCommit: 0,
      text: true,
      history: { commits: 150, editsPerCommit: 2, maxLineEdits: 4 },
    };
    const first = await ensureRepo(a, history);
    expect((await ensureRepo(b, history)).head).toBe(first.head);
    const git = async (...args: string[]) =>
      (await run('git', ['--git-dir', first.dir, ...args], { timeoutMs: 30_000, keepStdout: true })).stdout;
    expect((await git('rev-list', '--count', 'main')).trim()).toBe('151');
    const blobs = (await git('cat-file', '--batch-all-objects', '--batch-check=%(objecttype) %(deltabase)'))
      .split('\n')
      .filter((l) => l.startsWith('blob '));
    const deltas = blobs.filter((l) => !l.endsWith(' 0000000000000000000000000000000000000000'));
    expect(blobs.length).toBeGreaterThan(250);
    expect(deltas.length / blobs.length).toBeGreaterThan(0.8);
  });
});
