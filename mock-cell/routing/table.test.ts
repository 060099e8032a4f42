import { afterAll, describe, expect, it } from 'vitest';
import { learn } from '../learn.js';
import { demoModel, shellHeaders, testApp } from '../test-support/fixtures.js';
import { HANDLERS } from '../web/dispatch.js';
import { ROUTES } from './routes.js';
import { routesSnapshot, snapshotText } from './snapshot.js';
import { templateOf } from './spec.js';
import { matchRoute, RESERVED_TOP_LEVEL } from './table.js';

describe('route table', () => {
  it('has a handler for every page route and no handler without a route', () => {
    const pageRoutes = ROUTES.filter((r) => r.served === 'pages').map((r) => r.name);
    expect(new Set(pageRoutes).size).toBe(pageRoutes.length);
    expect(Object.keys(HANDLERS).sort()).toEqual([...pageRoutes].sort());
  });

  it('lists exactly the Fastify routes the app registers (besides the dispatcher)', async () => {
    const registered: string[] = [];
    const app = testApp(demoModel(), 'cell_us0');
    app.addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) {
        if (method !== 'HEAD' && r.url !== '/*') registered.push(`${method} ${r.url}`);
      }
    });
    await app.ready();
    await app.close();
    const listed = ROUTES.filter((r) => r.served === 'fastify').map(
      (r) => `${r.verb} ${r.spec.replace('/api/:version/', '/api/v4/')}`,
    );
    expect(registered.sort()).toEqual(listed.sort());
  });

  it('reserves the top-level words of its routes, so they never read as namespaces', () => {
    expect(RESERVED_TOP_LEVEL).toEqual(
      expect.arrayContaining(['-', 'admin', 'api', 'dashboard', 'organizations', 'users']),
    );
    expect(matchRoute('GET', '/api/unknown')).toBeUndefined();
    expect(matchRoute('GET', '/organizations/x/unknown')).toBeUndefined();
    expect(matchRoute('GET', '/users.json')).toBeUndefined();
    expect(matchRoute('GET', '/usersx')?.route.name).toBe('namespace');
  });

  it('matches HEAD as GET, and other verbs only when asked to', () => {
    expect(matchRoute('HEAD', '/a/b')?.route.name).toBe('project');
    expect(matchRoute('POST', '/a/b')).toBeUndefined();
    expect(matchRoute('POST', '/a/b', { anyVerb: true })?.route.name).toBe('project');
    expect(matchRoute('POST', '/users/sign_in')?.route.name).toBe('sign_in');
  });
});

describe('route snapshot', () => {
  const snapshot = routesSnapshot();

  it('has one entry per template, sorted in byte order, without test-only routes', () => {
    const templates = snapshot.map((e) => e.template);
    expect(new Set(templates).size).toBe(templates.length);
    expect([...templates].sort((a, b) => (a < b ? -1 : 1))).toEqual(templates);
    expect(templates).not.toContain('/api/:version/internal/_test/hook-calls');
    expect(snapshot).toContainEqual({
      template: '/users/sign_in',
      example: '/users/sign_in',
      acceptsFormat: true,
    });
    expect(snapshot).toContainEqual({
      template: '/*namespace_id/:project_id',
      example: '/foo/bar/foo',
      acceptsFormat: true,
      dottedExample: '/john.doe/bar/john.doe',
    });
    expect(snapshotText(snapshot).endsWith(']\n')).toBe(true);
  });

  /**
   * The router's snapshot test, replayed against learn: with namespaces and organizations `foo`
   * (cell_eu0), `john.doe` (cell_us1) and `john` (cell_eu1, the truncation trap), every example,
   * its `.json`, its dotted form and the dotted `.json` land where the entity they name lives.
   */
  it('classifies every example, .json, dotted and dotted .json like the entity they name', () => {
    const model = demoModel(undefined, (t) => {
      t.organizations.push(
        { id: 11, path: 'foo', name: 'Foo', cell: 'cell_eu0' },
        { id: 12, path: 'john.doe', name: 'John Doe Org', cell: 'cell_us1' },
        { id: 13, path: 'john', name: 'John Org', cell: 'cell_eu1' },
      );
      t.namespaces.push(
        { id: 21, path: 'foo', name: 'Foo', kind: 'group', organization: 'foo' },
        { id: 23, path: 'john', name: 'John', kind: 'user', organization: 'john' },
      );
      // The demo's own user namespace john.doe, moved into the organization of that name.
      const johnDoe = t.namespaces.find((n) => n.path === 'john.doe');
      if (johnDoe) johnDoe.organization = 'john.doe';
    });
    let replayed = 0;
    for (const entry of snapshot) {
      const route = ROUTES.find((r) => templateOf(r.spec) === entry.template);
      const byEntity = route?.owner.by === 'namespace' || route?.owner.by === 'organization';
      const variants: [string, string][] = [[entry.example, byEntity ? 'cell_eu0' : 'cell_us0']];
      if (entry.dottedExample) variants.push([entry.dottedExample, byEntity ? 'cell_us1' : 'cell_us0']);
      for (const [url, cell] of variants) {
        for (const u of entry.acceptsFormat ? [url, `${url}.json`] : [url]) {
          expect(learn(model, u).cell, `${entry.template}: ${u}`).toBe(cell);
          replayed++;
        }
      }
    }
    // Most entries replay in several forms (internal API entries, which take no format, replay once).
    expect(replayed).toBeGreaterThan(1.5 * snapshot.length);
  });
});

describe('GET /api/v4/internal/cells/routes_snapshot', () => {
  const app = testApp(demoModel(), 'cell_eu1');
  afterAll(() => app.close());

  it('serves the snapshot file text to shell-authenticated callers', async () => {
    const res = await app.inject({
      url: '/api/v4/internal/cells/routes_snapshot',
      headers: await shellHeaders(),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe(snapshotText(routesSnapshot()));
    expect((await app.inject({ url: '/api/v4/internal/cells/routes_snapshot' })).statusCode).toBe(401);
  });
});
