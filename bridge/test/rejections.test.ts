import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import {
  type Harness,
  OTHER_CELL_PROJECT,
  PROJECT,
  type RunningBridge,
  startHarness,
  USER,
} from '../test-support/harness.js';
import { openTunnel, type Protocol } from '../test-support/tunnel-client.js';
import { liveGit } from '../test-support/waits.js';

let h: Harness;
/** In front of the fake Rails: it records whether it was asked, and answers what the cell cannot. */
let b: RunningBridge;
/** In front of the real mock cell. */
let c: RunningBridge;
beforeAll(async () => {
  h = await startHarness();
  h.createRepo(PROJECT);
  b = await h.startBridge({ railsUrl: h.rails.url });
  c = await h.startBridge();
});
afterAll(async () => {
  await h?.close();
});

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

const BAD_TOKENS: Record<string, () => Promise<string | undefined>> = {
  missing: async () => undefined,
  'bad signature': () => signShellJwt(jwtKey('some other secret'), 'user-2'),
  expired: () => signShellJwt(jwtKey(h.shellSecret), 'user-2', now() - 300),
  'alg none': async () =>
    `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: 'gitlab-shell', gl_id: 'user-2', iat: now(), exp: now() + 60 })}.`,
  'wrong issuer': () =>
    new SignJWT({ gl_id: 'user-2' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('gitlab-workhorse')
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(jwtKey(h.shellSecret)),
  'no gl_id': () => signShellJwt(jwtKey(h.shellSecret)),
  garbage: async () => 'not.a.jwt',
};

/** Opens a tunnel, writes nothing and keeps the body open; returns the answer and how long it took. */
async function silentTunnel(protocol: Protocol, url: string, path: string, headers: Record<string, string>) {
  const started = performance.now();
  const t = openTunnel(protocol, url, path, headers);
  const status = await t.status;
  const responseHeaders = await t.headers;
  const ended = await t.done;
  const ms = performance.now() - started;
  await t.closed;
  const closedMs = performance.now() - started;
  t.close();
  return { status, headers: responseHeaders, body: t.received().toString('latin1'), ended, ms, closedMs };
}

describe.each(['h1', 'h2'] as const)('rejections over %s (body open and silent)', (protocol) => {
  for (const [name, make] of Object.entries(BAD_TOKENS)) {
    it(`answers a ${name} token with 404 Not found at once, without asking Rails`, async () => {
      const before = h.rails.preauths().length;
      const token = await make();
      const r = await silentTunnel(
        protocol,
        b.url,
        '/group/project.git/ssh-upload-pack',
        token === undefined ? {} : { 'gitlab-shell-api-request': token },
      );
      expect(r.status).toBe(404);
      expect(r.body).toBe('Not found');
      expect(r.headers['content-type']).toMatch(/^text\/plain/);
      expect(r.ended).toBe(true);
      expect(r.ms).toBeLessThan(1000);
      expect(r.closedMs).toBeLessThan(1000);
      expect(h.rails.preauths().length).toBe(before);
    });
  }

  const refusals = [
    {
      name: '404 for a user who cannot see the project',
      glId: USER.bob,
      path: `/${PROJECT}.git/ssh-upload-pack`,
      status: 404,
      body: "The project you were looking for could not be found or you don't have permission to view it.",
    },
    {
      name: '404 for a gl_id the cell does not know',
      glId: 'user-99',
      path: `/${PROJECT}.git/ssh-upload-pack`,
      status: 404,
      body: 'Not found',
    },
    {
      name: '403 for a Reporter pushing',
      glId: USER.carol,
      path: `/${PROJECT}.git/ssh-receive-pack`,
      status: 403,
      body: 'You are not allowed to push code to this project.',
    },
    {
      name: '421 + X-Gitlab-Cell-Redirect for a project of another cell',
      glId: USER.alice,
      path: `/${OTHER_CELL_PROJECT}.git/ssh-upload-pack`,
      status: 421,
      body: `The project ${OTHER_CELL_PROJECT} is served by cell cell_us0.`,
    },
  ];
  for (const refusal of refusals) {
    it(`passes back the mock cell's ${refusal.name} unchanged, at once`, async () => {
      const id = `refused-${refusal.status}-${refusal.glId}-${protocol}`;
      const r = await silentTunnel(protocol, c.url, refusal.path, {
        'gitlab-shell-api-request': await h.token(refusal.glId),
        'x-request-id': id,
      });
      expect(r.status).toBe(refusal.status);
      expect(r.body).toBe(refusal.body);
      expect(r.headers['content-type']).toMatch(/^text\/plain/);
      // Rails' answer is passed on with its headers: here the mock cell's name.
      expect(r.headers['x-gitlab-cell']).toBe('cell_eu0');
      if (refusal.status === 421) expect(r.headers['x-gitlab-cell-redirect']).toBe('cell_us0');
      expect(r.ms).toBeLessThan(1000);
      expect(r.closedMs).toBeLessThan(1000);
      expect(c.logs.tunnels().find((l) => l.correlation_id === id)).toMatchObject({
        status: refusal.status,
        outcome: 'policy',
      });
      expect(h.gitaly.logs.correlated(id)).toEqual([]);
      expect(liveGit()).toBe(0);
    });
  }

  it('passes back a Rails refusal without its internal headers (fake Rails: 503)', async () => {
    const project = `refused/p503-${protocol}`;
    h.rails.setPolicy(project, {
      kind: 'answer',
      status: 503,
      body: 'The git server, Gitaly, is not available at this time.',
      headers: { 'content-type': 'text/plain', 'gitlab-sv': 'x', 'gitlab-lb': 'y', 'retry-after': '5' },
    });
    const r = await silentTunnel(protocol, b.url, `/${project}.git/ssh-receive-pack`, {
      'gitlab-shell-api-request': await h.token(),
    });
    expect(r.status).toBe(503);
    expect(r.body).toBe('The git server, Gitaly, is not available at this time.');
    expect(r.headers['gitlab-sv']).toBeUndefined();
    expect(r.headers['gitlab-lb']).toBeUndefined();
    expect(r.ms).toBeLessThan(1000);
    expect(r.closedMs).toBeLessThan(1000);
  });

  it('turns an oversized refusal into an empty 404 (if 404) or a 500', async () => {
    const big = 'x'.repeat(40_000);
    h.rails.setPolicy(`big/notfound-${protocol}`, { kind: 'answer', status: 404, body: big });
    h.rails.setPolicy(`big/forbidden-${protocol}`, { kind: 'answer', status: 403, body: big });
    const token = await h.token();
    const nf = await silentTunnel(protocol, b.url, `/big/notfound-${protocol}.git/ssh-upload-pack`, {
      'gitlab-shell-api-request': token,
    });
    expect(nf.status).toBe(404);
    expect(nf.body).toBe('');
    const fb = await silentTunnel(protocol, b.url, `/big/forbidden-${protocol}.git/ssh-upload-pack`, {
      'gitlab-shell-api-request': token,
    });
    expect(fb.status).toBe(500);
  });

  it('answers 500 when Rails does not answer pre-authorization in time', async () => {
    const slow = await h.startBridge({ preauthTimeoutMs: 300, railsUrl: h.rails.url });
    h.rails.setPolicy(`slow/${protocol}`, { kind: 'hang' });
    const r = await silentTunnel(protocol, slow.url, `/slow/${protocol}.git/ssh-upload-pack`, {
      'gitlab-shell-api-request': await h.token(),
    });
    expect(r.status).toBe(500);
    expect(r.body).toBe('Internal Server Error\n');
    expect(r.ms).toBeLessThan(1000);
  });
});

describe.each(['h1', 'h2'] as const)('Geo requests over %s', (protocol) => {
  it('leaves a GL-Geo authorization to Rails and passes its 401 back at once', async () => {
    const before = h.rails.preauths().length;
    const r = await silentTunnel(protocol, b.url, '/group/project.git/ssh-upload-pack', {
      authorization: 'GL-Geo node1:forged',
    });
    expect(r.status).toBe(401);
    expect(r.body).toBe('Geo JWT authentication failed: bad token');
    expect(r.ms).toBeLessThan(1000);
    const pre = h.rails.preauths().slice(before);
    expect(pre).toHaveLength(1);
    expect(pre[0]?.headers.authorization).toBe('GL-Geo node1:forged');
  });

  it('still checks a shell token sent alongside a Geo authorization', async () => {
    const before = h.rails.preauths().length;
    const r = await silentTunnel(protocol, b.url, '/group/project.git/ssh-upload-pack', {
      authorization: 'GL-Geo node1:valid',
      'gitlab-shell-api-request': 'not.a.jwt',
    });
    expect(r.status).toBe(404);
    expect(h.rails.preauths().length).toBe(before);
  });
});

describe('Rails unreachable', () => {
  it.each(['h1', 'h2'] as const)('answers 500 at once over %s', async (protocol) => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const lonely = await h.startBridge({ railsUrl: `http://127.0.0.1:${port}` });
    const r = await silentTunnel(protocol, lonely.url, '/group/project.git/ssh-upload-pack', {
      'gitlab-shell-api-request': await h.token(),
    });
    expect(r.status).toBe(500);
    expect(r.body).toBe('Internal Server Error\n');
    expect(r.ms).toBeLessThan(1000);
    const line = lonely.logs.tunnels().at(-1);
    expect(line).toMatchObject({ outcome: 'system', status: 500, error_code: 'BRIDGE_PREAUTH_UNAVAILABLE' });
  });
});
