import { afterAll, describe, expect, it } from 'vitest';
import { signWorkhorseJwt } from '../../lib/jwt.js';
import { AccessMessages } from '../access.js';
import { demoModel, testApp, workhorseKey } from '../test-support/fixtures.js';
import { TokenStore } from '../tokens.js';
import { deployToken, jobToken } from './derived-tokens.js';

/** Rails' git HTTP pre-authorization as Workhorse calls it (GET info/refs, bodiless POSTs). */

const model = demoModel();
const tokens = new TokenStore();
const eu0 = testApp(model, 'cell_eu0', { tokens });
const us0 = testApp(model, 'cell_us0', { tokens });
afterAll(async () => {
  await Promise.all([eu0.close(), us0.close()]);
});

const PRIVATE = '/my-company/my-project.git';
const project = model.projectByPath('my-company/my-project');
const alice = model.userByUsername('alice');
if (!project || !alice) throw new Error('demo topology changed');

const basic = (login: string, password: string) =>
  `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

async function call(
  method: 'GET' | 'POST',
  url: string,
  opts: { auth?: string; jwt?: boolean; app?: typeof eu0 } = {},
) {
  const headers: Record<string, string> = {};
  if (opts.jwt !== false) headers['gitlab-workhorse-api-request'] = await signWorkhorseJwt(workhorseKey);
  if (opts.auth) headers.authorization = opts.auth;
  const res = await (opts.app ?? eu0).inject({ method, url, headers });
  return { status: res.statusCode, type: res.headers['content-type'], body: res.body, headers: res.headers };
}

const infoRefs = (path: string, service = 'git-upload-pack') => `${path}/info/refs?service=${service}`;

describe('git HTTP pre-authorization', () => {
  it('user + password: 200 Workhorse JSON with GL_ID, Repository and GitalyServer', async () => {
    const res = await call('GET', infoRefs(PRIVATE), { auth: basic('alice', 'alice-password') });
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/vnd.gitlab-workhorse+json');
    expect(JSON.parse(res.body)).toMatchObject({
      GL_ID: `user-${alice.id}`,
      GL_USERNAME: 'alice',
      GL_REPOSITORY: `project-${project.id}`,
      Repository: { gl_repository: `project-${project.id}`, gl_project_path: 'my-company/my-project' },
      GitalyServer: { call_metadata: { username: 'alice' } },
    });
  });

  it('no credentials on a private project: 401, Basic challenge and Rails’ text', async () => {
    const res = await call('GET', infoRefs(PRIVATE));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="GitLab"');
    expect(res.body).toMatch(
      /^HTTP Basic: Access denied\. If a password was provided for Git authentication/,
    );
    expect(res.body).toContain('troubleshooting_git.md#error-on-git-fetch-http-basic-access-denied');
  });

  it('wrong password: 401 with the same text', async () => {
    const res = await call('POST', `${PRIVATE}/git-upload-pack`, { auth: basic('alice', 'nope') });
    expect(res.status).toBe(401);
    expect(res.body).toContain('HTTP Basic: Access denied.');
  });

  it('anonymous upload-pack of a public project passes; anonymous push does not', async () => {
    const pub = await call('GET', infoRefs('/gitlab-org/gitlab-test.git'), { app: us0 });
    expect(pub.status).toBe(200);
    expect(JSON.parse(pub.body)).toMatchObject({ GL_ID: '', GL_USERNAME: '' });
    const push = await call('GET', infoRefs('/gitlab-org/gitlab-test.git', 'git-receive-pack'), { app: us0 });
    expect(push.status).toBe(401);
  });

  it('a PAT as password (any login), read_repository cannot push', async () => {
    const { token } = tokens.mintPat(
      { name: 't', userId: alice.id, scopes: ['read_repository'], expiresAt: null, cellId: 3 },
      1,
    );
    expect((await call('GET', infoRefs(PRIVATE), { auth: basic('oauth2', token) })).status).toBe(200);
    const push = await call('POST', `${PRIVATE}/git-receive-pack`, { auth: basic('alice', token) });
    expect(push.status).toBe(403);
    expect(push.body).toBe(AccessMessages.pushCode);
  });

  it('a job token (gitlab-ci-token) and a deploy token download their own project only', async () => {
    const job = await call('POST', `${PRIVATE}/git-upload-pack`, {
      auth: basic('gitlab-ci-token', jobToken(project, alice)),
    });
    expect(job.status).toBe(200);
    expect(JSON.parse(job.body)).toMatchObject({ GL_ID: `user-${alice.id}`, GlBuildID: expect.any(String) });
    const deploy = deployToken(project);
    const d = await call('GET', infoRefs(PRIVATE), { auth: basic(deploy.username, deploy.token) });
    expect(d.status).toBe(200);
    expect(JSON.parse(d.body)).toMatchObject({ GL_USERNAME: deploy.username });
    const other = await call('GET', infoRefs('/my-company/my-other-project.git'), {
      auth: basic(deploy.username, deploy.token),
    });
    expect(other.status).toBe(401);
  });

  it('Reporter may fetch but not push; no access → 404 text; another cell’s project → 421', async () => {
    const carol = basic('carol', 'carol-password');
    expect((await call('GET', infoRefs(PRIVATE), { auth: carol })).status).toBe(200);
    const push = await call('GET', infoRefs(PRIVATE, 'git-receive-pack'), { auth: carol });
    expect(push).toMatchObject({ status: 403, body: AccessMessages.pushCode });
    const hidden = await call('GET', infoRefs('/my-company/my-other-project.git'), {
      auth: basic('alice', 'alice-password'),
    });
    expect(hidden).toMatchObject({ status: 404, body: AccessMessages.projectNotFound });
    const moved = await call('GET', infoRefs('/gitlab-org/gitlab-test.git'), { auth: carol });
    expect(moved.status).toBe(421);
    expect(moved.headers['x-gitlab-cell-redirect']).toBe('cell_us0');
  });

  it('authenticated but without the Workhorse JWT: 403; a bad service: 403 Rails’ text', async () => {
    const auth = basic('alice', 'alice-password');
    expect((await call('GET', infoRefs(PRIVATE), { auth, jwt: false })).status).toBe(403);
    const bad = await call('GET', `${PRIVATE}/info/refs?service=git-upload-archive`, { auth });
    expect(bad).toMatchObject({ status: 403, body: AccessMessages.commandNotAllowed });
  });
});
