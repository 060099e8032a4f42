import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeRoutableToken } from '../../lib/routable-token.js';
import { SessionStore } from '../sessions.js';
import { CELLS, demoModel, testApp } from '../test-support/fixtures.js';
import { TokenStore } from '../tokens.js';

const model = demoModel();
const shared = { sessions: new SessionStore(), tokens: new TokenStore() };
const apps = Object.fromEntries(CELLS.map((c) => [c, testApp(model, c, shared)])) as Record<
  (typeof CELLS)[number],
  FastifyInstance
>;
const { cell_us0: us0, cell_us1: us1, cell_eu0: eu0, cell_eu1: eu1 } = apps;
afterAll(async () => {
  await Promise.all(Object.values(apps).map((a) => a.close()));
});

async function sessionCookie(login: string): Promise<string> {
  const res = await us0.inject({
    method: 'POST',
    url: '/users/sign_in',
    payload: { user: { login, password: `${login}-password` } },
  });
  return /^(_gitlab_session=[^;]+);/.exec(String(res.headers['set-cookie']))?.[1] as string;
}

/** Mints a PAT on `app` for the signed-in `login` (self endpoint, session auth). */
async function pat(app: FastifyInstance, login: string, scopes = ['api']): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/user/personal_access_tokens',
    headers: { cookie: await sessionCookie(login) },
    payload: { name: `${login}-token`, scopes },
  });
  // alice's session belongs to cell_eu0, root's and bob's to cell_us0.
  expect(res.statusCode, res.body).toBe(201);
  return res.json().token as string;
}

describe('personal access tokens', () => {
  it('mints a routable glpat- token carrying the minting cell, organization and user', async () => {
    const res = await eu0.inject({
      method: 'POST',
      url: '/api/v4/user/personal_access_tokens',
      headers: { cookie: await sessionCookie('alice'), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=ci&scopes[]=read_user&scopes[]=read_api&expires_at=2999-01-01',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      name: 'ci',
      revoked: false,
      active: true,
      scopes: ['read_user', 'read_api'],
      user_id: 2,
      expires_at: '2999-01-01',
    });
    expect(body.token).toMatch(/^glpat-[0-9A-Za-z_-]{27,300}\.01\.[0-9a-z]{2}[0-9a-z]{7}$/);
    expect(decodeRoutableToken(body.token).fields).toEqual({ c: '3', o: '3', u: '2' });
  });

  it('lets an administrator mint for another user; others get 403', async () => {
    const rootToken = await pat(us0, 'root');
    const res = await us0.inject({
      method: 'POST',
      url: '/api/v4/users/4/personal_access_tokens',
      headers: { 'private-token': rootToken },
      payload: { name: 'for-carol', scopes: ['api'] },
    });
    expect(res.statusCode).toBe(201);
    expect(decodeRoutableToken(res.json().token).fields).toEqual({ c: '1', o: '3', u: '4' });
    const bob = await us0.inject({
      method: 'POST',
      url: '/api/v4/users/4/personal_access_tokens',
      headers: { authorization: `Bearer ${await pat(us0, 'bob')}` },
      payload: { name: 'x', scopes: ['api'] },
    });
    expect(bob.statusCode).toBe(403);
    const missing = await us0.inject({
      method: 'POST',
      url: '/api/v4/users/99/personal_access_tokens',
      headers: { 'private-token': rootToken },
      payload: { name: 'x', scopes: ['api'] },
    });
    expect(missing.json()).toEqual({ message: '404 User Not Found' });
  });

  it('validates the request like Grape', async () => {
    const cookie = await sessionCookie('bob');
    const post = (payload: object) =>
      us0.inject({
        method: 'POST',
        url: '/api/v4/user/personal_access_tokens',
        headers: { cookie },
        payload,
      });
    expect((await post({})).json()).toEqual({ error: 'name is missing, scopes is missing' });
    expect((await post({ name: 'x', scopes: ['everything'] })).json()).toEqual({
      error: 'scopes does not have a valid value',
    });
    expect((await post({ name: 'x', scopes: ['api'], expires_at: 'soon' })).statusCode).toBe(400);
    expect(
      (await us0.inject({ method: 'POST', url: '/api/v4/user/personal_access_tokens', payload: {} }))
        .statusCode,
    ).toBe(401);
  });

  it('authenticates GET /api/v4/user by Private-Token or Bearer on any cell, naming the serving cell', async () => {
    const token = await pat(eu0, 'alice');
    for (const [app, headers] of [
      [eu0, { 'private-token': token }],
      [us1, { authorization: `Bearer ${token}` }],
    ] as const) {
      const res = await app.inject({ url: '/api/v4/user', headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: 2, username: 'alice', state: 'active' });
      expect(res.headers['x-gitlab-cell']).toBe(app === eu0 ? 'cell_eu0' : 'cell_us1');
    }
    expect(
      (await eu0.inject({ url: '/api/v4/user', headers: { 'private-token': `${token}x` } })).statusCode,
    ).toBe(401);
    expect((await eu0.inject({ url: '/api/v4/user' })).json()).toEqual({ message: '401 Unauthorized' });
    expect(
      (await eu0.inject({ url: '/api/v4/user.xml', headers: { 'private-token': token } })).statusCode,
    ).toBe(406);
  });

  it('enforces scopes and expiry', async () => {
    const runnerOnly = await pat(us0, 'bob', ['create_runner']);
    const res = await us0.inject({ url: '/api/v4/user', headers: { 'private-token': runnerOnly } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'insufficient_scope' });
    const expired = await us0.inject({
      method: 'POST',
      url: '/api/v4/user/personal_access_tokens',
      headers: { cookie: await sessionCookie('bob') },
      payload: { name: 'old', scopes: ['api'], expires_at: '2000-01-01' },
    });
    const old = expired.json().token as string;
    expect((await us0.inject({ url: '/api/v4/user', headers: { 'private-token': old } })).statusCode).toBe(
      401,
    );
  });
});

describe('GET /api/v4/projects/:id', () => {
  it('answers on the owning cell by id or URL-encoded path, and 421 elsewhere', async () => {
    const token = await pat(eu0, 'alice');
    for (const id of ['3', 'my-company%2Fmy-project', '3.json']) {
      const res = await eu0.inject({ url: `/api/v4/projects/${id}`, headers: { 'private-token': token } });
      expect(res.statusCode, id).toBe(200);
      expect(res.json()).toMatchObject({
        id: 3,
        path_with_namespace: 'my-company/my-project',
        visibility: 'private',
      });
    }
    const other = await us0.inject({ url: '/api/v4/projects/3', headers: { 'private-token': token } });
    expect(other.statusCode).toBe(421);
    expect(other.headers['x-gitlab-cell-redirect']).toBe('cell_eu0');
  });

  it('hides private projects from anonymous and non-members as 404', async () => {
    expect((await eu0.inject({ url: '/api/v4/projects/3' })).json()).toEqual({
      message: '404 Project Not Found',
    });
    const bob = await pat(us0, 'bob');
    expect(
      (await eu0.inject({ url: '/api/v4/projects/3', headers: { 'private-token': bob } })).statusCode,
    ).toBe(404);
    expect((await us0.inject({ url: '/api/v4/projects/1' })).json()).toMatchObject({ id: 1 });
    expect(
      (await us0.inject({ url: '/api/v4/projects/1', headers: { 'private-token': 'glpat-nope' } }))
        .statusCode,
    ).toBe(401);
  });
});

describe('runners', () => {
  it('creates a project runner with a routable glrt- token verified only on its cell', async () => {
    const dave = await sessionCookie('dave'); // Maintainer of my-company, session on cell_eu0
    const res = await eu0.inject({
      method: 'POST',
      url: '/api/v4/user/runners',
      headers: { cookie: dave },
      payload: { runner_type: 'project_type', project_id: 3, description: 'ci' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { id, token, token_expires_at } = res.json();
    expect(token_expires_at).toBeNull();
    expect(token).toMatch(/^glrt-/);
    expect(decodeRoutableToken(token).fields).toEqual({ c: '3', o: '3', p: '3', u: '5', t: '3' });

    const verify = await eu0.inject({
      method: 'POST',
      url: '/api/v4/runners/verify',
      headers: { 'runner-token': token },
    });
    expect(verify.statusCode).toBe(200);
    expect(verify.json()).toEqual({ id, token, token_expires_at: null });
    const byBody = await eu0.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: { token } });
    expect(byBody.statusCode).toBe(200);
    const elsewhere = await eu1.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: { token } });
    expect(elsewhere.statusCode).toBe(403);
  });

  it('creates group runners for owners (admins count), with g and t:2 in the token', async () => {
    const root = await pat(us0, 'root');
    const res = await us0.inject({
      method: 'POST',
      url: '/api/v4/user/runners',
      headers: { 'private-token': root },
      payload: { runner_type: 'group_type', group_id: 1 },
    });
    expect(res.statusCode).toBe(201);
    expect(decodeRoutableToken(res.json().token).fields).toEqual({ c: '1', o: '1', g: '1', u: '1', t: '2' });
    const bob = await pat(us0, 'bob'); // Maintainer of gitlab-org, not Owner
    const refused = await us0.inject({
      method: 'POST',
      url: '/api/v4/user/runners',
      headers: { 'private-token': bob },
      payload: { runner_type: 'group_type', group_id: 1 },
    });
    expect(refused.statusCode).toBe(403);
  });

  it('refuses bad requests, non-maintainers, and another cell’s project with the 421 signal', async () => {
    const alice = await pat(eu0, 'alice'); // Developer of my-company/my-project
    const post = (app: FastifyInstance, payload: object) =>
      app.inject({
        method: 'POST',
        url: '/api/v4/user/runners',
        headers: { 'private-token': alice },
        payload,
      });
    expect((await post(eu0, { runner_type: 'project_type', project_id: 3 })).statusCode).toBe(403);
    expect((await post(eu0, { runner_type: 'bogus' })).json()).toEqual({
      error: 'runner_type does not have a valid value',
    });
    expect((await post(eu0, { runner_type: 'instance_type' })).statusCode).toBe(400);
    expect((await post(eu0, { runner_type: 'project_type' })).json()).toEqual({
      error: 'project_id is missing',
    });
    expect((await post(eu0, { runner_type: 'project_type', project_id: 5 })).statusCode).toBe(404);
    const misdirected = await post(us0, { runner_type: 'project_type', project_id: 3 });
    expect(misdirected.statusCode).toBe(421);
    expect(misdirected.headers['x-gitlab-cell-redirect']).toBe('cell_eu0');
  });
});
