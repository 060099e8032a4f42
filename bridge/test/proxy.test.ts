import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type RunningBridge, startHarness } from '../test-support/harness.js';
import { simpleRequest } from '../test-support/tunnel-client.js';

let h: Harness;
/** In front of the fake Rails, whose echo shows what each proxied request carried. */
let b: RunningBridge;
beforeAll(async () => {
  h = await startHarness();
  b = await h.startBridge({ railsUrl: h.rails.url });
});
afterAll(async () => {
  await h?.close();
});

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

describe.each(['h1', 'h2'] as const)('reverse proxy to Rails over %s', (protocol) => {
  it('passes the internal API through intact: method, path, query, headers, body, status', async () => {
    const body = JSON.stringify({ action: 'git-upload-pack', key_id: 1, project: 'group/project' });
    const r = await simpleRequest(protocol, b.url, {
      method: 'POST',
      path: '/api/v4/internal/allowed?x=1&y=%2F',
      headers: {
        'content-type': 'application/json',
        'gitlab-shell-api-request': 'token-value',
        'x-request-id': `proxy-${protocol}`,
      },
      body,
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-fake-rails']).toBe('echo');
    expect(r.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(r.headers['x-request-id']).toBe(`proxy-${protocol}`);
    const echo = JSON.parse(r.body.toString()) as Echo;
    expect(echo.method).toBe('POST');
    expect(echo.url).toBe('/api/v4/internal/allowed?x=1&y=%2F');
    expect(echo.body).toBe(body);
    expect(echo.headers['gitlab-shell-api-request']).toBe('token-value');
    expect(echo.headers['content-type']).toBe('application/json');
    expect(echo.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(echo.headers['x-forwarded-proto']).toBe('http');
    expect(echo.headers['x-request-id']).toBe(`proxy-${protocol}`);
    expect(echo.headers.host).toBe(new URL(b.url).host);
  });

  it('passes non-2xx answers (421 + X-Gitlab-Cell-Redirect style) through', async () => {
    const r = await simpleRequest(protocol, b.url, { path: '/api/v4/internal/cells/learn?status=421' });
    expect(r.status).toBe(421);
    expect(JSON.parse(r.body.toString())).toMatchObject({ method: 'GET' });
  });

  it('proxies tunnel-looking paths with another method, and git routes with another content type', async () => {
    const get = await simpleRequest(protocol, b.url, { path: '/group/project.git/ssh-upload-pack' });
    expect((JSON.parse(get.body.toString()) as Echo).method).toBe('GET');
    const smart = await simpleRequest(protocol, b.url, {
      method: 'POST',
      path: '/group/project.git/git-upload-pack',
      // Workhorse's git rows match only their content type; anything else falls through to Rails.
      headers: { 'content-type': 'text/plain' },
      body: '0000',
    });
    expect((JSON.parse(smart.body.toString()) as Echo).body).toBe('0000');
  });

  it('answers its own health route without Rails', async () => {
    const before = h.rails.requests.length;
    const r = await simpleRequest(protocol, b.url, { path: '/-/bridge/health' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toEqual({ status: 'ok' });
    expect(h.rails.requests.length).toBe(before);
  });
});

describe('reverse proxy details', () => {
  it('drops hop-by-hop headers and appends to X-Forwarded-For', async () => {
    const r = await simpleRequest('h1', b.url, {
      path: '/api/v4/internal/check',
      headers: {
        connection: 'keep-alive, x-hop',
        'x-hop': '1',
        'x-forwarded-for': '10.0.0.1',
        'x-keep': '1',
      },
    });
    const echo = JSON.parse(r.body.toString()) as Echo;
    expect(echo.headers['x-hop']).toBeUndefined();
    expect(echo.headers['x-keep']).toBe('1');
    expect(echo.headers['x-forwarded-for']).toBe('10.0.0.1, 127.0.0.1');
  });

  it('answers 502 when Rails is down', async () => {
    const down = await h.startBridge({ railsUrl: 'http://127.0.0.1:1' });
    const r = await simpleRequest('h2', down.url, { path: '/api/v4/internal/check' });
    expect(r.status).toBe(502);
  });
});
