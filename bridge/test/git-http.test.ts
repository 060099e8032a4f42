import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForNoGit } from '../../mock-gitaly/test-support/harness.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import {
  BIG_PROJECT,
  GIT_ENV,
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
} from '../test-support/harness.js';

/**
 * Real git over smart HTTP straight into the bridge (Workhorse's git routes), with the real mock
 * cell pre-authorizing and the real mock Gitaly's SmartHTTPService behind it.
 */

let programs: CompiledPrograms;
let h: Harness;
let b: RunningBridge;
let bare: string;
beforeAll(async () => {
  programs = await compilePrograms(['mock-gitaly/hook-main.ts']);
  h = await startHarness({ hookProgram: programs.path('mock-gitaly/hook-main.ts') });
  bare = h.createRepo(PROJECT, { 'README.md': '# over http\n', 'a.txt': 'a\n' });
  h.createRepo(BIG_PROJECT, { 'big.bin': randomBytes(24 * 1024 * 1024) });
  b = await h.startBridge();
}, 60_000);
afterAll(async () => {
  await h?.close();
  programs?.cleanup();
});

const url = (user: string | undefined, project = PROJECT) => {
  const u = new URL(b.url);
  return `http://${user ? `${user}@` : ''}${u.host}/${project}.git`;
};
const ALICE = 'alice:alice-password';

interface Run {
  code: number | null;
  stderr: string;
}

function runGit(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const child = spawn('git', args, {
    cwd: opts.cwd ?? h.dir,
    env: { ...GIT_ENV, GIT_TERMINAL_PROMPT: '0', ...opts.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return finished(child);
}

function finished(child: ChildProcess): Promise<Run> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

const fresh = (name: string) => join(mkdtempSync(join(h.dir, `${name}-`)), 'repo');

describe('git over HTTP straight into the bridge', () => {
  it.each(['0', '2'])(
    'clones and pushes a branch with protocol v%s (hooks told protocol http)',
    async (v) => {
      const dest = fresh(`clone-v${v}`);
      const clone = await runGit(['-c', `protocol.version=${v}`, 'clone', url(ALICE), dest]);
      expect(clone.stderr).not.toMatch(/fatal/);
      expect(clone.code).toBe(0);
      expect(readFileSync(join(dest, 'a.txt'), 'utf8')).toBe('a\n');
      writeFileSync(join(dest, `v${v}.txt`), `${v}\n`);
      git(['add', '.'], dest);
      git(['commit', '-qm', `v${v}`], dest);
      const push = await runGit(
        ['-c', `protocol.version=${v}`, 'push', 'origin', `HEAD:refs/heads/http-v${v}`],
        {
          cwd: dest,
        },
      );
      expect(push.stderr).not.toMatch(/fatal|error/);
      expect(push.code).toBe(0);
      expect(git(['--git-dir', bare, 'rev-parse', `http-v${v}`]).trim()).toBe(
        git(['rev-parse', 'HEAD'], dest).trim(),
      );
      const allowed = h.cell.hookLog.calls().filter((e) => e.endpoint === 'allowed');
      expect(allowed.at(-1)?.body).toMatchObject({ protocol: 'http', action: 'git-receive-pack' });
    },
  );

  it('a Developer’s push to protected main is refused by the hook with GitLab’s message; main unchanged', async () => {
    const dest = fresh('protected');
    expect((await runGit(['clone', url(ALICE), dest])).code).toBe(0);
    const before = git(['--git-dir', bare, 'rev-parse', 'main']);
    writeFileSync(join(dest, 'main.txt'), 'main\n');
    git(['add', '.'], dest);
    git(['commit', '-qm', 'to main'], dest);
    const push = await runGit(['push', 'origin', 'HEAD:main'], { cwd: dest });
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    expect(git(['--git-dir', bare, 'rev-parse', 'main'])).toBe(before);
  });

  it('a Reporter’s push is refused with Rails’ text; refs unchanged', async () => {
    const dest = fresh('reporter');
    expect((await runGit(['clone', url('carol:carol-password'), dest])).code).toBe(0);
    const refs = git(['--git-dir', bare, 'for-each-ref']);
    const push = await runGit(['push', 'origin', 'HEAD:refs/heads/carol'], { cwd: dest });
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain('remote: You are not allowed to push code to this project.');
    expect(git(['--git-dir', bare, 'for-each-ref'])).toBe(refs);
  });

  it('no credentials → git’s Authentication failed after the 401; a wrong password shows Rails’ text', async () => {
    const none = await runGit(['clone', url(undefined), fresh('anon')], {
      env: { GIT_ASKPASS: '/bin/true' },
    });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('Authentication failed');
    const wrong = await runGit(['clone', url('alice:wrong'), fresh('wrong')]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(
      'remote: HTTP Basic: Access denied. If a password was provided for Git authentication',
    );
    expect(wrong.stderr).toContain('Authentication failed');
  });

  it('shallow and partial clones; a negotiation big enough that git gzips its request', async () => {
    const shallow = await runGit(['clone', '--depth=1', url(ALICE), fresh('shallow')]);
    expect(shallow.code).toBe(0);
    const partial = await runGit(['clone', '--filter=blob:none', url(ALICE), fresh('partial')]);
    expect(partial.code).toBe(0);
    const dest = fresh('haves');
    expect((await runGit(['clone', url(ALICE), dest])).code).toBe(0);
    // Local commits the server lacks become `have` lines: well over 1024 bytes of request.
    for (let i = 0; i < 60; i++) git(['commit', '-q', '--allow-empty', '-m', `local ${i}`], dest);
    git([
      '--git-dir',
      bare,
      'update-ref',
      'refs/heads/server-new',
      git([
        '--git-dir',
        bare,
        'commit-tree',
        '-m',
        'new',
        `${git(['--git-dir', bare, 'rev-parse', 'main']).trim()}^{tree}`,
      ]).trim(),
    ]);
    const fetch = await runGit(['-c', 'protocol.version=0', 'fetch', 'origin'], {
      cwd: dest,
      env: { GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' },
    });
    expect(fetch.code).toBe(0);
    expect(fetch.stderr).toMatch(/Content-Encoding: gzip/i);
    expect(git(['rev-parse', 'origin/server-new'], dest).trim()).toMatch(/^[0-9a-f]{40}$/);
  });

  it('a client killed mid-clone leaves no git process after 2 s', async () => {
    const child = spawn(
      'git',
      ['clone', '--progress', url('dave:dave-password', BIG_PROJECT), fresh('killed')],
      {
        cwd: h.dir,
        env: { ...GIT_ENV, GIT_TERMINAL_PROMPT: '0' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const done = finished(child);
    // Killed once the pack is flowing (the 24 MiB blob takes longer than its first progress line).
    child.stderr?.on('data', (d: Buffer) => {
      if (/Receiving objects/.test(d.toString())) child.kill('SIGKILL');
    });
    const run = await done;
    expect(run.code).toBeNull();
    expect(await waitForNoGit(2000)).toEqual([]);
  });

  it.each([
    ['deflate, gzip', 'gzip'],
    ['gzip;q=0, identity', undefined],
    [undefined, undefined],
  ] as const)(
    'info/refs with Accept-Encoding %j is answered with Content-Encoding %s',
    async (accept, encoding) => {
      const raw = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>(
        (resolve, reject) => {
          const req = http.get(
            `${b.url}/${PROJECT}.git/info/refs?service=git-upload-pack`,
            {
              headers: {
                authorization: `Basic ${Buffer.from(ALICE).toString('base64')}`,
                ...(accept ? { 'accept-encoding': accept } : {}),
              },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
            },
          );
          req.on('error', reject);
        },
      );
      expect(raw.headers['content-encoding']).toBe(encoding);
      const body = encoding === 'gzip' ? gunzipSync(raw.body) : raw.body;
      expect(body.subarray(0, 34).toString()).toBe('001e# service=git-upload-pack\n0000');
      expect(body.toString()).toContain('refs/heads/main');
    },
  );

  it('a body that claims gzip but is not: 500 before any byte, no git left', async () => {
    const res = await fetch(`${b.url}/${PROJECT}.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-git-upload-pack-request',
        'content-encoding': 'gzip',
        authorization: `Basic ${Buffer.from(ALICE).toString('base64')}`,
      },
      body: '0032want 0000000000000000000000000000000000000000\n00000009done\n',
    });
    expect(res.status).toBe(500);
    await res.arrayBuffer();
    expect(await waitForNoGit(2000)).toEqual([]);
  });

  it('an LFS upload whose body is not its oid is refused with 400 and nothing is stored', async () => {
    const body = Buffer.from('not what the oid says');
    const oid = 'a'.repeat(64);
    const res = await fetch(`${b.url}/${PROJECT}.git/gitlab-lfs/objects/${oid}/${body.length}`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/octet-stream',
        authorization: `Basic ${Buffer.from(ALICE).toString('base64')}`,
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(existsSync(join(h.storage, '@lfs-objects', 'aa', 'aa', oid.slice(4)))).toBe(false);
    expect(readdirSync(join(h.storage, '@lfs-objects', 'tmp', 'upload'))).toEqual([]);
  });
});
