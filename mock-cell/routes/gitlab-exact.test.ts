import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCiJobToken } from '../../lib/ci-job-token.js';
import { setSigningSkewMs } from '../../lib/clock.js';
import { signWorkhorseJwt } from '../../lib/jwt.js';
import { AccessMessages } from '../access.js';
import {
  CELLS,
  demoModel,
  preauthHeaders,
  shellHeaders,
  testApp,
  workhorseKey,
} from '../test-support/fixtures.js';
import { CiJobTokens } from '../world/job-tokens.js';

/** GitLab-exact endpoints and answers: git_audit_event, the two-step sign-in, no seed-000 signals when off. */

const model = demoModel();
const seedOff = demoModel(undefined, (t) => {
  delete t.seed000Routing;
});
const eu0 = testApp(model, 'cell_eu0');
const off = Object.fromEntries(CELLS.map((c) => [c, testApp(seedOff, c)])) as Record<
  (typeof CELLS)[number],
  FastifyInstance
>;
afterAll(async () => {
  await Promise.all([eu0.close(), ...Object.values(off).map((a) => a.close())]);
});

const AUDIT = '/api/v4/internal/shellhorse/git_audit_event';
const audit = {
  action: 'git-upload-pack',
  protocol: 'ssh',
  gl_repository: 'project-3',
  changes: '_any',
  key_id: 2,
  check_ip: '203.0.113.1',
};

describe('POST /api/v4/internal/shellhorse/git_audit_event', () => {
  it('answers GitLab CE: no audit event needed, after the access check', async () => {
    const res = await eu0.inject({
      method: 'POST',
      url: AUDIT,
      headers: await shellHeaders(),
      payload: audit,
    });
    expect([res.statusCode, res.json()]).toEqual([
      200,
      { status: false, message: 'No git audit event needed' },
    ]);
    // Workhorse calls it with its own JWT and the username.
    const http = await eu0.inject({
      method: 'POST',
      url: AUDIT,
      headers: { 'gitlab-workhorse-api-request': await signWorkhorseJwt(workhorseKey) },
      payload: {
        ...audit,
        key_id: undefined,
        username: 'alice',
        protocol: 'http',
        packfile_stats: { wants: 3 },
      },
    });
    expect(http.statusCode).toBe(200);
  });

  it('refuses without a JWT, without the required fields, for other actions, and denies as /allowed', async () => {
    expect((await eu0.inject({ method: 'POST', url: AUDIT, payload: audit })).statusCode).toBe(401);
    const h = await shellHeaders();
    const missing = await eu0.inject({
      method: 'POST',
      url: AUDIT,
      headers: h,
      payload: { action: 'git-upload-pack' },
    });
    expect([missing.statusCode, missing.json()]).toEqual([
      400,
      { error: 'protocol is missing, gl_repository is missing, changes is missing' },
    ]);
    const archive = await eu0.inject({
      method: 'POST',
      url: AUDIT,
      headers: h,
      payload: { ...audit, action: 'git-upload-archive' },
    });
    expect([archive.statusCode, archive.json()]).toEqual([
      400,
      { status: false, message: 'No valid action specified' },
    ]);
    // bob is no member of the private my-company/my-project.
    const denied = await eu0.inject({
      method: 'POST',
      url: AUDIT,
      headers: h,
      payload: { ...audit, key_id: 3 },
    });
    expect([denied.statusCode, denied.json()]).toEqual([
      404,
      { status: false, message: AccessMessages.projectNotFound },
    ]);
  });
});

describe('GET /users/sign_in_path?login=', () => {
  it('says stay (null) on the user’s own cell or for an unknown login, else the path the router classifies', async () => {
    const legacy = off.cell_us0;
    const path = async (app: FastifyInstance, login: string) =>
      (
        await app.inject({ method: 'GET', url: `/users/sign_in_path?login=${encodeURIComponent(login)}` })
      ).json();
    // alice's default organization (my-organization) is on cell_eu0; bob's on cell_us0.
    expect(await path(legacy, 'alice')).toEqual({ sign_in_path: '/users/sign_in?login=alice' });
    expect(await path(legacy, 'john.doe')).toEqual({ sign_in_path: '/users/sign_in?login=john.doe' });
    expect(await path(legacy, 'bob')).toEqual({ sign_in_path: null });
    expect(await path(off.cell_eu0, 'alice')).toEqual({ sign_in_path: null });
    expect(await path(legacy, 'nobody')).toEqual({ sign_in_path: null });
  });
});

describe('seed000Routing off (GitLab-faithful)', () => {
  it('names no cell in any answer and has no learn endpoint', async () => {
    const check = await off.cell_eu0.inject({
      method: 'GET',
      url: '/api/v4/internal/check',
      headers: await shellHeaders(),
    });
    expect(check.statusCode).toBe(200);
    expect(check.headers['x-gitlab-cell']).toBeUndefined();
    const learn = await off.cell_eu0.inject({
      method: 'GET',
      url: '/api/v4/internal/cells/learn?method=GET&path_info=/my-company',
      headers: await shellHeaders(),
    });
    expect([learn.statusCode, learn.json()]).toEqual([404, { message: '404 Not Found' }]);
    // With seed 000 on, the demo's answers stay as they were.
    expect(
      (await eu0.inject({ method: 'GET', url: '/api/v4/internal/check', headers: await shellHeaders() }))
        .headers['x-gitlab-cell'],
    ).toBe('cell_eu0');
  });

  it('answers a project of another cell as one it does not have: /allowed, pre-authorization, API, pages', async () => {
    const us0 = off.cell_us0;
    const allowed = await us0.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      headers: await shellHeaders(),
      payload: {
        action: 'git-upload-pack',
        project: 'my-company/my-project.git',
        key_id: 2,
        protocol: 'ssh',
      },
    });
    expect([allowed.statusCode, allowed.json()]).toEqual([
      404,
      { status: false, message: AccessMessages.projectNotFound },
    ]);
    expect(allowed.headers['x-gitlab-cell-redirect']).toBeUndefined();
    const preauth = await us0.inject({
      method: 'POST',
      url: '/my-company/my-project.git/ssh-upload-pack',
      headers: await preauthHeaders('user-2'),
    });
    expect([preauth.statusCode, preauth.body]).toEqual([404, AccessMessages.projectNotFound]);
    const api = await us0.inject({ method: 'GET', url: '/api/v4/projects/3' });
    expect([api.statusCode, api.json()]).toEqual([404, { message: '404 Project Not Found' }]);
    for (const url of ['/my-company', '/my-company/my-project', '/organizations/my-organization']) {
      const page = await us0.inject({ method: 'GET', url });
      expect(page.statusCode, url).toBe(404);
      expect(page.headers['x-gitlab-cell-redirect']).toBeUndefined();
    }
    const lfs = await us0.inject({
      method: 'POST',
      url: '/api/v4/internal/lfs_authenticate',
      headers: await shellHeaders(),
      payload: { key_id: 2, operation: 'download', project: '/my-company/my-project.git' },
    });
    expect([lfs.statusCode, lfs.json()]).toEqual([404, { message: '404 Project Not Found' }]);
    // On its own cell the project is served as before.
    const own = await off.cell_eu0.inject({
      method: 'POST',
      url: '/my-company/my-project.git/ssh-upload-pack',
      headers: await preauthHeaders('user-2'),
    });
    expect(own.statusCode).toBe(200);
  });
});

describe('POST /api/v4/internal/_test/ci_job_token', () => {
  it('mints a glcbt- token of this cell for a user and project; unknown ones 404', async () => {
    const h = { ...(await shellHeaders()), 'content-type': 'application/json' };
    const res = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/_test/ci_job_token',
      headers: h,
      payload: { username: 'dave', project: 'my-company/my-project' },
    });
    const token = (res.json() as { token: string }).token;
    expect(decodeCiJobToken(token)?.routing).toEqual({
      c: String(model.cell('cell_eu0')?.id),
      o: '3',
      u: '5',
      p: '3',
      g: '3',
    });
    expect(decodeCiJobToken(token)?.claims).toMatchObject({
      aud: 'gitlab-authz-token',
      iss: model.externalUrl,
    });
    const nobody = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/_test/ci_job_token',
      headers: h,
      payload: { username: 'nobody', project: 'my-company/my-project' },
    });
    expect(nobody.statusCode).toBe(404);
    expect(
      (await eu0.inject({ method: 'POST', url: '/api/v4/internal/_test/ci_job_token', payload: {} }))
        .statusCode,
    ).toBe(401);
  });
});

describe('glcbt- job tokens on the API', () => {
  it('read a project on the cell that minted them; elsewhere, forged or expired they are 401', async () => {
    const jobTokens = new CiJobTokens(model);
    const mint = testApp(model, 'cell_eu0', { jobTokens });
    const other = testApp(model, 'cell_us0', { jobTokens });
    try {
      const alice = model.userByUsername('alice');
      const project = model.projectByPath('my-company/my-project');
      if (!alice || !project) throw new Error('demo topology changed');
      const token = jobTokens.issue('cell_eu0', alice, project);
      const get = (app: FastifyInstance, headers: Record<string, string>, url = '/api/v4/projects/3') =>
        app.inject({ method: 'GET', url, headers });
      const ok = await get(mint, { 'job-token': token });
      expect([ok.statusCode, ok.json().path_with_namespace]).toEqual([200, 'my-company/my-project']);
      expect(
        (await get(mint, {}, `/api/v4/projects/3?job_token=${encodeURIComponent(token)}`)).statusCode,
      ).toBe(200);
      expect((await get(other, { 'job-token': token })).statusCode).toBe(401);
      const forged = `${token.slice(0, -4)}AAAA`;
      expect((await get(mint, { 'job-token': forged })).statusCode).toBe(401);
      // Not accepted where GitLab does not admit job tokens.
      expect((await get(mint, { 'job-token': token }, '/api/v4/user')).statusCode).toBe(401);
      setSigningSkewMs(-2 * 3600 * 1000);
      const expired = jobTokens.issue('cell_eu0', alice, project);
      setSigningSkewMs(0);
      expect((await get(mint, { 'job-token': expired })).statusCode).toBe(401);
    } finally {
      setSigningSkewMs(0);
      await Promise.all([mint.close(), other.close()]);
    }
  });
});
