import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import { demoModel, keyBlob, shellHeaders, shellKey, sshKeyLine, testApp } from '../test-support/fixtures.js';

/** Key bytes 0xfb encode with "+" in base64, which an unescaped query string turns into a space. */
const PLUS_KEY = sshKeyLine(0xfb);
const app = testApp(
  demoModel('/nonexistent', (t) => {
    t.keys.push({ id: 9, user: 'alice', title: 'plus', key: PLUS_KEY });
  }),
  'cell_us0',
);
afterAll(async () => {
  await app.close();
});

const now = () => Math.floor(Date.now() / 1000);

function signed(claims: { iss: string; iat: number; exp: number }, key = shellKey) {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(claims.iss)
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(key);
}

async function get(url: string, token?: string) {
  const res = await app.inject({
    url,
    headers: token === undefined ? {} : { 'gitlab-shell-api-request': token },
  });
  return { status: res.statusCode, body: res.body, json: () => res.json() };
}

describe('shell JWT on /api/v4/internal/*', () => {
  const paths = [
    '/api/v4/internal/check',
    '/api/v4/internal/cells/learn?path_info=/x',
    '/api/v4/internal/discover?username=alice',
  ];

  it.each([
    ['missing', async () => undefined],
    [
      'expired beyond the 60 s leeway',
      async () => signed({ iss: 'gitlab-shell', iat: now() - 300, exp: now() - 200 }),
    ],
    [
      'issued by another issuer',
      async () => signed({ iss: 'gitlab-workhorse', iat: now(), exp: now() + 60 }),
    ],
    ['signed with another secret', async () => signShellJwt(jwtKey('another-secret-another-secret-xx'))],
    [
      'unsigned (alg none)',
      async () =>
        new UnsecuredJWT({}).setIssuer('gitlab-shell').setIssuedAt().setExpirationTime('1m').encode(),
    ],
    ['garbage', async () => 'not.a.jwt'],
  ])('refuses a token that is %s with 401 {"message":"401 Unauthorized"}', async (_name, token) => {
    const t = await token();
    for (const path of paths) {
      const res = await get(path, t);
      expect(res.status, path).toBe(401);
      expect(res.json()).toEqual({ message: '401 Unauthorized' });
    }
    const post = await app.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      headers: t === undefined ? {} : { 'gitlab-shell-api-request': t },
      payload: { action: 'git-upload-pack', project: 'gitlab-org/gitlab', username: 'bob' },
    });
    expect(post.statusCode).toBe(401);
  });

  it("accepts a token expired less than 60 s ago (Rails' leeway)", async () => {
    const res = await get(
      '/api/v4/internal/check',
      await signed({ iss: 'gitlab-shell', iat: now() - 90, exp: now() - 30 }),
    );
    expect(res.status).toBe(200);
  });
});

describe('internal API endpoints', () => {
  it('GET /check reports the API version and redis', async () => {
    const res = await get('/api/v4/internal/check', await signShellJwt(shellKey));
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      api_version: 'v4',
      gitlab_version: expect.any(String),
      gitlab_rev: expect.any(String),
      redis: true,
    });
  });

  it('GET /authorized_keys finds a key by its base64 blob', async () => {
    const blob = keyBlob(sshKeyLine(2));
    const headers = await shellHeaders();
    const res = await app.inject({
      url: `/api/v4/internal/authorized_keys?key=${encodeURIComponent(blob)}`,
      headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: 2,
      title: 'alice@demo',
      key: sshKeyLine(2),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      expires_at: null,
    });
    // An unescaped "+" arrives as a space; the key is still found.
    const plusBlob = keyBlob(PLUS_KEY);
    expect(plusBlob).toContain('+');
    const raw = await app.inject({ url: `/api/v4/internal/authorized_keys?key=${plusBlob}`, headers });
    expect(raw.json().id).toBe(9);
  });

  it('GET /authorized_keys answers 404 "Key Not Found" for unknown keys and 400 without key', async () => {
    const headers = await shellHeaders();
    const res = await app.inject({
      url: `/api/v4/internal/authorized_keys?key=${encodeURIComponent(keyBlob(sshKeyLine(77)))}`,
      headers,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: '404 Key Not Found' });
    expect((await app.inject({ url: '/api/v4/internal/authorized_keys', headers })).statusCode).toBe(400);
  });

  it('GET /discover names the user of a key id or username, and null when unknown', async () => {
    const token = await signShellJwt(shellKey);
    expect((await get('/api/v4/internal/discover?key_id=3', token)).json()).toEqual({
      id: 3,
      name: 'Bob',
      username: 'bob',
    });
    expect((await get('/api/v4/internal/discover?username=carol', token)).json()).toEqual({
      id: 4,
      name: 'Carol',
      username: 'carol',
    });
    const unknown = await get('/api/v4/internal/discover?key_id=404', token);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toBe('null');
  });

  it('answers everything else with 404 {"message":"404 Not Found"}', async () => {
    for (const url of [
      '/-/nope',
      '/my-company/my-project/-/nope',
      '/api/v4/projects',
      '/api/v4/internal/nope',
    ]) {
      const res = await app.inject({ url, headers: await shellHeaders() });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ message: '404 Not Found' });
    }
    const post = await app.inject({ method: 'POST', url: '/my-company/my-project.git/git-upload-archive' });
    expect(post.statusCode).toBe(404);
    expect(post.json()).toEqual({ message: '404 Not Found' });
  });
});

describe('no internal API answer is a redirect (gitlab-shell treats any 3xx as a system error)', () => {
  it('answers every internal endpoint, known or not, without a 3xx', async () => {
    const headers = { ...(await shellHeaders()), 'content-type': 'application/json' };
    const requests: { method: 'GET' | 'POST'; url: string; payload?: Record<string, unknown> }[] = [
      { method: 'GET', url: '/api/v4/internal/check' },
      { method: 'GET', url: '/api/v4/internal/check/' },
      { method: 'GET', url: `/api/v4/internal/authorized_keys?key=${encodeURIComponent('AAAA')}` },
      { method: 'GET', url: '/api/v4/internal/discover?username=alice' },
      {
        method: 'POST',
        url: '/api/v4/internal/allowed',
        payload: { action: 'git-upload-pack', project: 'gitlab-org/gitlab.git', username: 'alice' },
      },
      { method: 'POST', url: '/api/v4/internal/allowed/', payload: { action: 'git-upload-pack' } },
      {
        method: 'POST',
        url: '/api/v4/internal/allowed',
        payload: { action: 'git-upload-pack', project: 'my-company/my-project', username: 'alice' },
      },
      { method: 'GET', url: '/api/v4/internal/unknown' },
      { method: 'POST', url: '/api/v4/internal/lfs_authenticate', payload: {} },
    ];
    for (const r of requests) {
      const res = await app.inject({
        method: r.method,
        url: r.url,
        headers,
        ...(r.payload ? { payload: r.payload } : {}),
      });
      expect({ url: r.url, redirect: res.statusCode >= 300 && res.statusCode < 400 }).toEqual({
        url: r.url,
        redirect: false,
      });
    }
  });
});
