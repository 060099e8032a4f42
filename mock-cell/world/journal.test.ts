import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { signWorkhorseJwt } from '../../lib/jwt.js';
import { demoModel, shellHeaders, testApp, workhorseKey } from '../test-support/fixtures.js';
import { installWorld } from './hooks.js';
import { RailsWorld } from './rails-world.js';

const entries: JournalDraft[] = [];
const world = new RailsWorld((e) => entries.push(e));
const model = demoModel();
const eu0 = testApp(model, 'cell_eu0', { world, geoSite: undefined });
afterAll(async () => {
  await eu0.close();
});

describe('the journal of a cell', () => {
  it('records endpoint, method, query, routing headers (secrets redacted), JWT claims and body fields', async () => {
    const changes = `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/feature\n`.repeat(20);
    const res = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed?private_token=secret&x=1',
      headers: {
        ...(await shellHeaders('user-2')),
        'x-forwarded-for': '203.0.113.9',
        'git-protocol': 'version=2',
        'x-gitlab-http-router-rule-action': 'classify',
        cookie: '_gitlab_session=cell-3-abc',
        'user-agent': 'gitlab-shell',
      },
      payload: {
        action: 'git-receive-pack',
        project: 'my-company/my-project',
        key_id: 2,
        protocol: 'ssh',
        changes,
        password: 'hunter2',
      },
    });
    expect(res.statusCode).toBe(200);
    const e = entries.at(-1) as JournalDraft;
    expect(e).toMatchObject({
      cell: 'cell_eu0',
      service: 'rails',
      endpoint: '/api/v4/internal/allowed',
      method: 'POST',
      status: 200,
      query: { private_token: '[redacted]', x: '1' },
      headers: {
        'gitlab-shell-api-request': '[redacted]',
        'x-forwarded-for': '203.0.113.9',
        'git-protocol': 'version=2',
        'x-gitlab-http-router-rule-action': 'classify',
        cookie: '[redacted]',
        'user-agent': 'gitlab-shell',
        'content-type': 'application/json',
      },
      jwt: { 'gitlab-shell-api-request': { iss: 'gitlab-shell', gl_id: 'user-2' } },
      fields: { action: 'git-receive-pack', project: 'my-company/my-project', key_id: 2, protocol: 'ssh' },
    });
    expect(e.site).toBeUndefined();
    expect(JSON.stringify(e)).not.toContain('hunter2');
    expect(String(e.fields?.changes).length).toBeLessThanOrEqual(513);
    expect(e.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(e.time)).not.toBeNaN();
  });

  it('records refusals and unknown paths too, each once', async () => {
    const before = entries.length;
    await eu0.inject({ method: 'GET', url: '/api/v4/internal/check' });
    await eu0.inject({
      method: 'POST',
      url: '/my-company/my-project.git/ssh-upload-pack',
      headers: { 'gitlab-workhorse-api-request': await signWorkhorseJwt(workhorseKey) },
    });
    await eu0.inject({ method: 'GET', url: '/no/such/thing/-/x' });
    expect(entries.slice(before).map((e) => [e.endpoint, e.status])).toEqual([
      ['/api/v4/internal/check', 401],
      ['/my-company/my-project.git/ssh-upload-pack', 404],
      ['/no/such/thing/-/x', 404],
    ]);
    expect(entries.at(-2)?.jwt).toMatchObject({
      'gitlab-workhorse-api-request': { iss: 'gitlab-workhorse' },
    });
  });

  it('never lets a failing sink break a request, and sends nothing without one', async () => {
    const broken = new RailsWorld(() => {
      throw new Error('supervisor gone');
    });
    const app = testApp(model, 'cell_us0', { world: broken });
    const silent = testApp(model, 'cell_us1');
    try {
      expect(
        (await app.inject({ method: 'GET', url: '/api/v4/internal/check', headers: await shellHeaders() }))
          .statusCode,
      ).toBe(200);
      expect(
        (await silent.inject({ method: 'GET', url: '/api/v4/internal/check', headers: await shellHeaders() }))
          .statusCode,
      ).toBe(200);
    } finally {
      await Promise.all([app.close(), silent.close()]);
    }
  });

  it('names the Geo site of a secondary process', async () => {
    const app = Fastify();
    installWorld(app, model, new RailsWorld((e) => entries.push(e)), {
      cell: 'cell_eu0',
      site: 'cell_eu0-secondary',
    });
    app.get('/ping', async () => 'pong');
    await app.inject({ method: 'GET', url: '/ping' });
    expect(entries.at(-1)).toMatchObject({
      cell: 'cell_eu0',
      site: 'cell_eu0-secondary',
      endpoint: '/ping',
      status: 200,
    });
    await app.close();
  });
});
