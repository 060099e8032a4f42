import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../sessions.js';
import { CELLS, demoModel, testApp } from '../test-support/fixtures.js';
import { TokenStore } from '../tokens.js';

/** The four demo cells of one process: one model, one session store, one token store. */
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

async function signIn(
  app: FastifyInstance,
  login: string,
  password = `${login}-password`,
  redirect?: string,
) {
  return app.inject({
    method: 'POST',
    url:
      redirect === undefined ? '/users/sign_in' : `/users/sign_in?redirect=${encodeURIComponent(redirect)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ 'user[login]': login, 'user[password]': password }).toString(),
  });
}

/** Signs in on the legacy cell (the router pins `/users` there) and returns the session cookie. */
async function sessionOf(login: string): Promise<string> {
  const res = await signIn(us0, login);
  expect(res.statusCode).toBe(302);
  const cookie = /^(_gitlab_session=[^;]+);/.exec(String(res.headers['set-cookie']))?.[1];
  expect(cookie).toBeDefined();
  return cookie as string;
}

const get = (app: FastifyInstance, url: string, cookie?: string) =>
  app.inject({ url, headers: cookie === undefined ? {} : { cookie } });

describe('sign in', () => {
  it('shows the form and keeps the redirect target', async () => {
    const res = await get(us0, '/users/sign_in?redirect=/my-company/my-project');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<h1>Sign in</h1>');
    expect(res.body).toContain('action="/users/sign_in?redirect=/my-company/my-project"');
  });

  it("sets _gitlab_session=cell-<id of the user's home cell>-<32 hex> and redirects", async () => {
    const alice = await signIn(us0, 'alice', undefined, '/my-company/my-project');
    expect(alice.statusCode).toBe(302);
    expect(alice.headers.location).toBe('/my-company/my-project');
    expect(alice.headers['set-cookie']).toMatch(
      /^_gitlab_session=cell-3-[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const bob = await signIn(eu1, 'bob');
    expect(bob.headers.location).toBe('/');
    expect(bob.headers['set-cookie']).toMatch(/^_gitlab_session=cell-1-[0-9a-f]{32};/);
  });

  it('refuses a wrong password or unknown user with 401 and the form', async () => {
    for (const res of [await signIn(us0, 'alice', 'nope'), await signIn(us0, 'mallory')]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.body).toContain('Invalid login or password.');
    }
  });

  it('only redirects to local paths', async () => {
    for (const target of ['https://evil.example/', '//evil.example/x', '/\\evil']) {
      expect((await signIn(us0, 'bob', undefined, target)).headers.location).toBe('/');
    }
  });

  it('accepts JSON credentials and signs out', async () => {
    const res = await us0.inject({
      method: 'POST',
      url: '/users/sign_in',
      payload: { user: { login: 'carol', password: 'carol-password' } },
    });
    const cookie = /^(_gitlab_session=[^;]+);/.exec(String(res.headers['set-cookie']))?.[1] as string;
    expect((await get(eu0, '/organizations/my-organization/-/dashboard', cookie)).statusCode).toBe(200);
    const out = await us0.inject({ method: 'POST', url: '/users/sign_out', headers: { cookie } });
    expect(out.statusCode).toBe(302);
    expect(out.headers['set-cookie']).toMatch(/Max-Age=0/);
    expect((await get(eu0, '/organizations/my-organization/-/dashboard', cookie)).statusCode).toBe(302);
  });
});

describe('seed 000 flows', () => {
  it('logged out: /my-company/my-project → 302 /users/sign_in?redirect=…; after sign-in the page', async () => {
    const out = await get(eu0, '/my-company/my-project');
    expect(out.statusCode).toBe(302);
    expect(out.headers.location).toBe('/users/sign_in?redirect=/my-company/my-project');
    const cookie = await sessionOf('alice');
    const page = await get(eu0, '/my-company/my-project', cookie);
    expect(page.statusCode).toBe(200);
    expect(page.headers['x-gitlab-cell']).toBe('cell_eu0');
    expect(page.body).toContain('<h1>My Company / my-project · cell_eu0</h1>');
    expect(page.body).toContain('data-page="projects:show"');
  });

  it('a public project of another cell: /gitlab-org/gitlab on cell_us0, signed in or not', async () => {
    const cookie = await sessionOf('alice');
    for (const c of [undefined, cookie]) {
      const page = await get(us0, '/gitlab-org/gitlab', c);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<h1>GitLab.org / gitlab · cell_us0</h1>');
    }
  });

  it('a private project without access → 404 (own cell, and another cell with a foreign session)', async () => {
    const cookie = await sessionOf('alice');
    expect((await get(eu0, '/my-company/my-other-project', cookie)).statusCode).toBe(404);
    const foreign = await get(us1, '/not-my-company/not-my-project', cookie);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).toContain('404: Page not found');
  });

  it('honours a session only on the cell its prefix names', async () => {
    const cookie = await sessionOf('root'); // cell-1: root's organization is on the legacy cell
    expect((await get(us0, '/-/profile', cookie)).statusCode).toBe(200);
    // On another cell the session is foreign: a private page is a 404, not a sign-in loop.
    expect((await get(eu0, '/my-company/my-project', cookie)).statusCode).toBe(404);
    expect((await get(eu0, '/-/profile', cookie)).statusCode).toBe(404);
  });

  it('/ and /dashboard redirect by the default organization', async () => {
    const alice = await sessionOf('alice');
    const root = await get(eu0, '/', alice);
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/organizations/my-organization/-/dashboard');
    expect((await get(eu0, '/dashboard', alice)).headers.location).toBe(
      '/organizations/my-organization/-/dashboard',
    );
    const dashboard = await get(eu0, '/organizations/my-organization/-/dashboard', alice);
    expect(dashboard.statusCode).toBe(200);
    expect(dashboard.body).toContain('<h1>My Organization dashboard · cell_eu0</h1>');
    expect(dashboard.body).toContain('My Company / my-project');
    expect(dashboard.body).not.toContain('my-other-project');

    const bob = await sessionOf('bob');
    expect((await get(us0, '/', bob)).headers.location).toBe('/dashboard');
    const global = await get(us0, '/dashboard', bob);
    expect(global.statusCode).toBe(200);
    expect(global.body).toContain('<h1>Dashboard · cell_us0</h1>');

    expect((await get(us0, '/')).headers.location).toBe('/users/sign_in');
    expect((await get(us0, '/dashboard')).headers.location).toBe('/users/sign_in?redirect=/dashboard');
  });

  it('/admin: only on the legacy cell, only for administrators', async () => {
    const root = await sessionOf('root');
    const page = await get(us0, '/admin', root);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Admin Area · cell_us0</h1>');
    expect((await get(us0, '/admin')).headers.location).toBe('/users/sign_in?redirect=/admin');
    expect((await get(us0, '/admin', await sessionOf('bob'))).statusCode).toBe(404);
    expect((await get(eu1, '/admin', root)).statusCode).toBe(404);
  });

  it("pages of another cell's namespace or organization answer the 421 signal", async () => {
    for (const url of [
      '/my-company/my-project',
      '/my-company',
      '/organizations/my-organization/-/dashboard',
    ]) {
      const res = await get(us0, url);
      expect(res.statusCode, url).toBe(421);
      expect(res.headers['x-gitlab-cell-redirect']).toBe('cell_eu0');
      expect(res.json()).toMatchObject({ status: false });
    }
  });

  it('serves .json where the route accepts it and refuses other formats', async () => {
    const json = await get(us0, '/gitlab-org/gitlab.json');
    expect(json.json()).toMatchObject({ path_with_namespace: 'gitlab-org/gitlab', cell: 'cell_us0' });
    expect((await get(us0, '/gitlab-org.json')).json()).toMatchObject({ path: 'gitlab-org', kind: 'group' });
    expect((await get(us0, '/gitlab-org/gitlab.xml')).statusCode).toBe(406);
    expect((await get(us0, '/gitlab-org/nope.json')).json()).toEqual({ message: '404 Not Found' });
  });

  it('namespace, organization and issues pages; .git redirects to the project', async () => {
    expect((await get(us0, '/gitlab-org')).body).toContain('<h1>GitLab.org · cell_us0</h1>');
    expect((await get(us0, '/organizations/gitlab-com-public')).body).toContain('GitLab.org');
    expect((await get(us0, '/organizations/gitlab-com-public/projects')).body).toContain(
      'GitLab.org / gitlab-test',
    );
    expect((await get(us0, '/gitlab-org/gitlab/-/issues')).body).toContain(
      '<h1>Issues · GitLab.org / gitlab · cell_us0</h1>',
    );
    expect((await get(us0, '/gitlab-org/gitlab/-/issues/1')).statusCode).toBe(404);
    const git = await get(us0, '/gitlab-org/gitlab.git');
    expect(git.statusCode).toBe(302);
    expect(git.headers.location).toBe('/gitlab-org/gitlab');
    expect((await get(us0, '/gitlab-org/gitlab.git/info/refs?service=git-upload-pack')).statusCode).toBe(403);
    expect((await get(us0, '/nobody-here')).statusCode).toBe(404);
  });
});
