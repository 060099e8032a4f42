import { afterAll, describe, expect, it } from 'vitest';
import { HookLog } from '../hook-log.js';
import { demoModel, shellHeaders, testApp } from '../test-support/fixtures.js';

const ZERO = '0'.repeat(40);
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

const app = testApp(demoModel(), 'cell_eu0');
afterAll(async () => {
  await app.close();
});

async function post(url: string, payload: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url, headers: await shellHeaders(), payload });
  return { status: res.statusCode, body: res.json() };
}

describe('Gitaly hook endpoints', () => {
  it('pre_receive increases the reference counter of a known repository', async () => {
    expect(await post('/api/v4/internal/pre_receive', { gl_repository: 'project-3' })).toEqual({
      status: 200,
      body: { reference_counter_increased: true },
    });
    expect((await post('/api/v4/internal/pre_receive', { gl_repository: 'project-999' })).status).toBe(404);
    expect((await post('/api/v4/internal/pre_receive', {})).status).toBe(400);
  });

  it('post_receive suggests a merge request for each new non-default branch', async () => {
    const changes = [
      `${ZERO} ${A} refs/heads/feature/login`,
      `${A} ${B} refs/heads/main`,
      `${ZERO} ${B} refs/heads/fix`,
      `${B} ${ZERO} refs/heads/old`,
      `${ZERO} ${A} refs/tags/v1`,
    ].join('\n');
    const res = await post('/api/v4/internal/post_receive', {
      gl_repository: 'project-3',
      identifier: 'user-2',
      changes,
      push_options: [],
    });
    expect(res).toEqual({
      status: 200,
      body: {
        reference_counter_decreased: true,
        messages: [
          {
            message:
              'To create a merge request for feature/login, visit:\n  http://gitlab.example.test:8080/my-company/my-project/-/merge_requests/new?merge_request%5Bsource_branch%5D=feature%2Flogin',
            type: 'basic',
          },
          {
            message:
              'To create a merge request for fix, visit:\n  http://gitlab.example.test:8080/my-company/my-project/-/merge_requests/new?merge_request%5Bsource_branch%5D=fix',
            type: 'basic',
          },
        ],
      },
    });
  });

  it('post_receive has no message for a new default branch', async () => {
    const res = await post('/api/v4/internal/post_receive', {
      gl_repository: 'project-3',
      identifier: 'user-2',
      changes: `${ZERO} ${A} refs/heads/main\n`,
    });
    expect(res.body).toEqual({ reference_counter_decreased: true, messages: [] });
  });

  it('records hook calls, with push options, for tests to read', async () => {
    const fresh = testApp(demoModel(), 'cell_eu0');
    const post = async (url: string, payload: Record<string, unknown>) =>
      fresh.inject({ method: 'POST', url, headers: await shellHeaders(), payload });
    await post('/api/v4/internal/pre_receive', {});
    await post('/api/v4/internal/allowed', {
      action: 'git-receive-pack',
      gl_repository: 'project-3',
      changes: `${ZERO} ${A} refs/tags/t`,
      user_id: '2',
      protocol: 'ssh',
      push_options: ['ci.skip', 'merge_request.create'],
    });
    await post('/api/v4/internal/allowed', {
      action: 'git-upload-pack',
      project: 'my-company/my-project',
      username: 'alice',
    });
    await post('/api/v4/internal/post_receive', {
      gl_repository: 'project-3',
      identifier: 'user-2',
      changes: `${ZERO} ${A} refs/tags/t`,
      push_options: ['ci.skip'],
    });
    const res = await fresh.inject({
      url: '/api/v4/internal/_test/hook-calls',
      headers: await shellHeaders(),
    });
    const unauthenticated = await fresh.inject({ url: '/api/v4/internal/_test/hook-calls' });
    await fresh.close();
    expect(res.statusCode).toBe(200);
    const calls = res.json().calls as {
      endpoint: string;
      status: number;
      body: Record<string, unknown>;
      at: string;
    }[];
    // GitLab Shell's /allowed (no gl_repository) is not a hook call.
    expect(calls.map((c) => [c.endpoint, c.status])).toEqual([
      ['pre_receive', 400],
      ['allowed', 200],
      ['post_receive', 200],
    ]);
    expect(calls[1]!.body.push_options).toEqual(['ci.skip', 'merge_request.create']);
    expect(calls[2]!.body.push_options).toEqual(['ci.skip']);
    expect(Date.parse(calls[1]!.at)).not.toBeNaN();
    expect(unauthenticated.statusCode).toBe(401);
  });
});

describe('HookLog', () => {
  it('keeps only the newest calls', () => {
    const log = new HookLog(3);
    for (let i = 0; i < 5; i++) log.record('pre_receive', 200, { i });
    expect(log.calls().map((c) => c.body)).toEqual([{ i: 2 }, { i: 3 }, { i: 4 }]);
  });
});
