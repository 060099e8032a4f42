import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jwtKey, SHELL_HEADER, verifyShellJwt } from '../lib/jwt.js';
import {
  formatPostReceiveMessages,
  type HookIo,
  identityParams,
  objectDirectoriesEnv,
  pushOptions,
  runHook,
} from './hook-run.js';
import { encodeHooksPayload, HOOKS_PAYLOAD_ENV } from './hooks-payload.js';
import { cleanup, tempDir, writeSecret } from './test-support/harness.js';

afterEach(cleanup);

describe('pushOptions', () => {
  it('reads GIT_PUSH_OPTION_<i> up to the count', () => {
    expect(
      pushOptions({ GIT_PUSH_OPTION_COUNT: '2', GIT_PUSH_OPTION_0: 'ci.skip', GIT_PUSH_OPTION_1: 'a=b' }),
    ).toEqual(['ci.skip', 'a=b']);
    expect(pushOptions({ GIT_PUSH_OPTION_0: 'ignored' })).toEqual([]);
    expect(pushOptions({ GIT_PUSH_OPTION_COUNT: 'x' })).toEqual([]);
  });
});

describe('identityParams', () => {
  it('maps gl_id kinds to the /allowed identity field', () => {
    expect(identityParams('user-12')).toEqual({ user_id: '12' });
    expect(identityParams('key-3')).toEqual({ key_id: '3' });
    expect(identityParams('username-bob')).toEqual({ username: 'bob' });
    expect(identityParams('robot')).toEqual({});
  });
});

describe('objectDirectoriesEnv', () => {
  it('makes the quarantine directories relative to the repository', () => {
    const repo = tempDir();
    mkdirSync(join(repo, 'objects', 'incoming-abc'), { recursive: true });
    const env = objectDirectoriesEnv(
      {
        GIT_OBJECT_DIRECTORY: join(repo, 'objects', 'incoming-abc'),
        GIT_ALTERNATE_OBJECT_DIRECTORIES: join(repo, 'objects'),
      },
      repo,
      repo,
    );
    expect(JSON.parse(env)).toEqual({
      GIT_OBJECT_DIRECTORY_RELATIVE: 'objects/incoming-abc',
      GIT_ALTERNATE_OBJECT_DIRECTORIES_RELATIVE: ['objects'],
    });
  });

  it('resolves relative directories against the hook working directory and falls back to GIT_QUARANTINE_PATH', () => {
    const repo = tempDir();
    const env = objectDirectoriesEnv({ GIT_QUARANTINE_PATH: './objects/q' }, repo, repo);
    expect(JSON.parse(env)).toEqual({
      GIT_OBJECT_DIRECTORY_RELATIVE: 'objects/q',
      GIT_ALTERNATE_OBJECT_DIRECTORIES_RELATIVE: [],
    });
  });
});

describe('formatPostReceiveMessages', () => {
  it('prints basic messages as they are and boxes centred alerts', () => {
    const rule = '='.repeat(72);
    expect(
      formatPostReceiveMessages([
        { message: 'line one\nline two', type: 'basic' },
        { message: 'Heads up\nx', type: 'alert' },
      ]),
    ).toBe(`\nline one\nline two\n${rule}\n\n${' '.repeat(32)}Heads up\n${' '.repeat(35)}x\n\n${rule}\n`);
    expect(formatPostReceiveMessages([])).toBe('');
  });
});

describe('runHook', () => {
  const SECRET = 'hook-secret';
  let server: Server | undefined;
  const seen: Array<{ path: string; body: Record<string, unknown>; jwt: boolean }> = [];

  afterEach(async () => {
    seen.length = 0;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function rails(answers: Record<string, [number, string]>): Promise<string> {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const path = (req.url ?? '').replace('/api/v4/internal/', '');
      const jwt = await verifyShellJwt(jwtKey(SECRET), req.headers[SHELL_HEADER] as string);
      seen.push({ path, body: JSON.parse(Buffer.concat(chunks).toString()), jwt: jwt.ok });
      const [code, body] = answers[path] ?? [404, '{"message":"404 Not Found"}'];
      res.writeHead(code, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  function io(gitlabUrl: string, secretFile?: string) {
    const out: string[] = [];
    const err: string[] = [];
    const repo = tempDir();
    const hookIo: HookIo = {
      stdin: 'a b refs/heads/main\n',
      env: {
        [HOOKS_PAYLOAD_ENV]: encodeHooksPayload({
          gl_id: 'user-5',
          gl_username: 'eve',
          gl_repository: 'project-9',
          gl_project_path: 'g/p',
          protocol: 'ssh',
          repo_path: repo,
          gitlab_url: gitlabUrl,
          gitlab_secret_file: secretFile ?? writeSecret(tempDir(), 'secret', SECRET),
        }),
        GIT_PUSH_OPTION_COUNT: '1',
        GIT_PUSH_OPTION_0: 'ci.skip',
      },
      cwd: repo,
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
    };
    return { hookIo, out: () => out.join(''), err: () => err.join('') };
  }

  it('pre-receive: passes when /allowed and /pre_receive agree', async () => {
    const url = await rails({
      allowed: [200, '{"status":true}'],
      pre_receive: [200, '{"reference_counter_increased":true}'],
    });
    const h = io(url);
    expect(await runHook('pre-receive', h.hookIo)).toBe(0);
    expect(seen.map((s) => [s.path, s.jwt])).toEqual([
      ['allowed', true],
      ['pre_receive', true],
    ]);
    expect(seen[0]?.body).toMatchObject({
      user_id: '5',
      changes: 'a b refs/heads/main\n',
      push_options: ['ci.skip'],
    });
  });

  it('pre-receive: a 401 denial shows its message', async () => {
    const url = await rails({ allowed: [401, '{"status":false,"message":"You shall not push"}'] });
    const h = io(url);
    expect(await runHook('pre-receive', h.hookIo)).toBe(1);
    expect(h.err()).toBe('GitLab: You shall not push\n');
  });

  it('pre-receive: an answer without a message is an API error', async () => {
    const url = await rails({ allowed: [500, 'oops'] });
    const h = io(url);
    expect(await runHook('pre-receive', h.hookIo)).toBe(1);
    expect(h.err()).toBe('GitLab: Internal API error (500)\n');
  });

  it('pre-receive: fails when the reference counter is not increased', async () => {
    const url = await rails({
      allowed: [200, '{"status":true}'],
      pre_receive: [200, '{"reference_counter_increased":false}'],
    });
    const h = io(url);
    expect(await runHook('pre-receive', h.hookIo)).toBe(1);
    expect(h.err()).toMatch(/reference counter/);
  });

  it('pre-receive: fails closed when the secret cannot be read', async () => {
    const h = io('http://127.0.0.1:9', join(tempDir(), 'missing'));
    expect(await runHook('pre-receive', h.hookIo)).toBe(1);
    expect(h.err()).toMatch(
      /^GitLab: pre-receive hook is misconfigured: cannot read GitLab Shell secret file/,
    );
  });

  it('post-receive: prints the messages', async () => {
    const url = await rails({
      post_receive: [
        200,
        '{"reference_counter_decreased":true,"messages":[{"message":"hi","type":"basic"}]}',
      ],
    });
    const h = io(url);
    expect(await runHook('post-receive', h.hookIo)).toBe(0);
    expect(h.out()).toBe('\nhi\n');
    expect(seen[0]?.body).toEqual({
      gl_repository: 'project-9',
      identifier: 'user-5',
      changes: 'a b refs/heads/main\n',
      push_options: ['ci.skip'],
    });
  });

  it('post-receive: warns but succeeds when the API is unreachable', async () => {
    const h = io('http://127.0.0.1:9');
    expect(await runHook('post-receive', h.hookIo)).toBe(0);
    expect(h.err()).toBe('GitLab: warning: post-receive: Internal API unreachable\n');
  });
});
