import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { signShellJwt } from '../../lib/jwt.js';
import { demoModel, preauthHeaders, shellHeaders, testApp } from '../test-support/fixtures.js';
import { TEMPORARILY_UNAVAILABLE, UNAVAILABLE } from './maintenance.js';
import { RailsWorld } from './rails-world.js';

/** my-organization (id 3, cell_eu0) holds my-company/my-project (id 3); alice (key 2) develops it. */
const world = new RailsWorld();
const model = demoModel();
const eu0 = testApp(model, 'cell_eu0', { world });
const us0 = testApp(model, 'cell_us0', { world });
afterAll(async () => {
  await Promise.all([eu0.close(), us0.close()]);
});
beforeEach(() => world.maintenance.clear());

const allowed = async (project = 'my-company/my-project.git') =>
  eu0.inject({
    method: 'POST',
    url: '/api/v4/internal/allowed',
    headers: await shellHeaders(),
    payload: { action: 'git-upload-pack', project, key_id: 2, protocol: 'ssh' },
  });

describe('organization maintenance', () => {
  it('refuses /allowed with 503 + Retry-After: 60 for a time-bounded reason, 403 for an indefinite one', async () => {
    world.maintenance.set('my-organization', { state: 'maintenance', reason: 'migration' });
    const bounded = await allowed();
    expect(bounded.statusCode).toBe(503);
    expect(bounded.headers['retry-after']).toBe('60');
    expect(bounded.json()).toEqual({ status: false, message: TEMPORARILY_UNAVAILABLE });
    world.maintenance.set('my-organization', { state: 'maintenance_initialization', reason: 'legal' });
    const indefinite = await allowed();
    expect(indefinite.statusCode).toBe(403);
    expect(indefinite.headers['retry-after']).toBeUndefined();
    expect(indefinite.json()).toEqual({ status: false, message: UNAVAILABLE });
  });

  it('leaves other organizations and unauthenticated calls alone', async () => {
    world.maintenance.set('my-organization', { state: 'maintenance', reason: 'migration' });
    const other = await us0.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      headers: await shellHeaders(),
      payload: {
        action: 'git-upload-pack',
        project: 'gitlab-org/gitlab-test.git',
        key_id: 2,
        protocol: 'ssh',
      },
    });
    expect(other.statusCode).toBe(200);
    const anonymous = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      payload: { action: 'git-upload-pack', project: 'my-company/my-project' },
    });
    expect(anonymous.statusCode).toBe(401);
    world.maintenance.set('my-organization', { state: 'active' });
    expect((await allowed()).statusCode).toBe(200);
  });

  it('refuses the Workhorse pre-authorization and git HTTP as text, LFS and the API as JSON', async () => {
    world.maintenance.set('my-organization', { state: 'maintenance', reason: 'incident' });
    const preauth = await eu0.inject({
      method: 'POST',
      url: '/my-company/my-project.git/ssh-receive-pack',
      headers: await preauthHeaders('user-2'),
    });
    expect([preauth.statusCode, preauth.headers['retry-after'], preauth.body]).toEqual([
      503,
      '60',
      TEMPORARILY_UNAVAILABLE,
    ]);
    expect(preauth.headers['content-type']).toMatch(/^text\/plain/);
    const http = await eu0.inject({
      method: 'GET',
      url: '/my-company/my-project.git/info/refs?service=git-upload-pack',
    });
    expect([http.statusCode, http.body]).toEqual([503, TEMPORARILY_UNAVAILABLE]);
    const lfs = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/lfs_authenticate',
      headers: await shellHeaders(),
      payload: { key_id: 2, operation: 'download', project: '/my-company/my-project.git' },
    });
    expect([lfs.statusCode, lfs.json()]).toEqual([503, { message: TEMPORARILY_UNAVAILABLE }]);
    for (const id of ['3', 'my-company%2Fmy-project']) {
      const api = await eu0.inject({ method: 'GET', url: `/api/v4/projects/${id}` });
      expect([api.statusCode, api.json()]).toEqual([503, { message: TEMPORARILY_UNAVAILABLE }]);
    }
  });

  it('refuses the organization’s web pages too: an error page, or JSON for .json', async () => {
    world.maintenance.set('my-organization', { state: 'maintenance', reason: 'migration' });
    for (const url of ['/my-company', '/my-company/my-project/-/issues', '/organizations/my-organization']) {
      const page = await eu0.inject({ method: 'GET', url });
      expect([page.statusCode, page.headers['retry-after']], url).toEqual([503, '60']);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain(TEMPORARILY_UNAVAILABLE);
    }
    const json = await eu0.inject({ method: 'GET', url: '/my-company/my-project.json' });
    expect([json.statusCode, json.json()]).toEqual([503, { message: TEMPORARILY_UNAVAILABLE }]);
    world.maintenance.set('my-organization', { state: 'maintenance', reason: 'billing' });
    expect((await eu0.inject({ method: 'GET', url: '/my-company' })).statusCode).toBe(403);
    // Pages of no organization stay served.
    expect((await eu0.inject({ method: 'GET', url: '/users/sign_in' })).statusCode).toBe(200);
  });
});

describe('org_mover API', () => {
  const call = async (
    method: 'GET' | 'POST',
    op: string,
    params: Record<string, unknown> = {},
    auth = true,
  ) => {
    const headers = auth ? await shellHeaders() : {};
    const res =
      method === 'GET'
        ? await eu0.inject({
            method,
            url: `/api/v4/internal/org_mover/${op}?${new URLSearchParams(params as Record<string, string>)}`,
            headers,
          })
        : await eu0.inject({ method, url: `/api/v4/internal/org_mover/${op}`, headers, payload: params });
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
  };

  it('walks active → maintenance_initialization → maintenance → active, with 204s, idempotent', async () => {
    expect(await call('GET', 'maintenance_state', { organization_id: 3 })).toEqual({
      status: 200,
      body: { state: 'active' },
    });
    expect(await call('GET', 'maintenance_readiness', { organization_id: 3 })).toEqual({
      status: 200,
      body: { ready: true, blocking_reason: null },
    });
    expect(
      (await call('POST', 'start_maintenance', { organization_id: 3, maintenance_reason: 'migration' }))
        .status,
    ).toBe(204);
    expect(
      (await call('POST', 'start_maintenance', { organization_id: 3, maintenance_reason: 'migration' }))
        .status,
    ).toBe(204);
    expect((await call('GET', 'maintenance_state', { organization_id: '3' })).body).toEqual({
      state: 'maintenance_initialization',
    });
    // Draining already refuses git with the reason's answer.
    expect((await allowed()).statusCode).toBe(503);
    expect((await call('POST', 'exit_maintenance', { organization_id: 3 })).status).toBe(422);
    expect((await call('POST', 'confirm_maintenance', { organization_id: 3 })).status).toBe(204);
    expect((await call('GET', 'maintenance_state', { organization_id: 3 })).body).toEqual({
      state: 'maintenance',
    });
    expect((await call('POST', 'cancel_maintenance', { organization_id: 3 })).status).toBe(422);
    expect((await call('POST', 'exit_maintenance', { organization_id: 3 })).status).toBe(204);
    expect((await allowed()).statusCode).toBe(200);
  });

  it('cancels a maintenance being initialized', async () => {
    await call('POST', 'start_maintenance', { organization_id: 3, maintenance_reason: 'legal' });
    expect((await allowed()).statusCode).toBe(403);
    expect((await call('POST', 'cancel_maintenance', { organization_id: 3 })).status).toBe(204);
    expect((await call('GET', 'maintenance_state', { organization_id: 3 })).body).toEqual({
      state: 'active',
    });
  });

  it('answers 400, 401, 404 and 422 as GitLab does', async () => {
    expect(await call('GET', 'maintenance_state')).toEqual({
      status: 400,
      body: { error: 'organization_id is missing' },
    });
    expect(await call('GET', 'maintenance_state', { organization_id: 'x' })).toEqual({
      status: 400,
      body: { error: 'organization_id is invalid' },
    });
    expect(await call('GET', 'maintenance_state', { organization_id: 99 })).toEqual({
      status: 404,
      body: { message: '404 Organization Not Found' },
    });
    expect((await call('GET', 'maintenance_state', { organization_id: 3 }, false)).status).toBe(401);
    expect(await call('POST', 'start_maintenance', { organization_id: 3 })).toEqual({
      status: 400,
      body: { error: 'maintenance_reason is missing' },
    });
    expect(
      await call('POST', 'start_maintenance', { organization_id: 3, maintenance_reason: 'holiday' }),
    ).toEqual({
      status: 400,
      body: { error: 'maintenance_reason does not have a valid value' },
    });
    expect(
      await call('POST', 'start_maintenance', { organization_id: 1, maintenance_reason: 'migration' }),
    ).toEqual({
      status: 422,
      body: { message: 'start_maintenance transition is not allowed for the default organization' },
    });
  });

  it('refuses a forged shell JWT', async () => {
    const forged = await signShellJwt(new TextEncoder().encode('another-secret-0123456789abcdef'));
    const res = await eu0.inject({
      method: 'GET',
      url: '/api/v4/internal/org_mover/maintenance_state?organization_id=3',
      headers: { 'gitlab-shell-api-request': forged },
    });
    expect(res.statusCode).toBe(401);
  });
});
