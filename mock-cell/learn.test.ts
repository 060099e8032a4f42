import { afterAll, describe, expect, it } from 'vitest';
import { learn } from './learn.js';
import { CELLS, demoModel, shellHeaders, testApp } from './test-support/fixtures.js';

const model = demoModel();

describe('learn answers', () => {
  it('routes project and namespace paths by their top-level namespace', () => {
    const project = { path: '/my-company', cell: 'cell_eu0', source: 'routable', cache_ttl: 300 };
    expect(learn(model, '/my-company/my-project')).toEqual(project);
    expect(learn(model, '/my-company/my-project/-/issues/1')).toEqual(project);
    expect(learn(model, '/my-company')).toEqual(project);
    expect(learn(model, '/my-company/does-not-exist-yet')).toEqual(project);
    expect(learn(model, '/not-my-company/not-my-project')).toEqual({
      ...project,
      path: '/not-my-company',
      cell: 'cell_us1',
    });
    expect(learn(model, '/gitlab-org/gitlab-test')).toEqual({
      ...project,
      path: '/gitlab-org',
      cell: 'cell_us0',
    });
    expect(learn(model, '/alice')).toEqual({ ...project, path: '/alice', cell: 'cell_eu0' });
  });

  it('resolves `.git` and `.git/...` suffixes like the project', () => {
    for (const p of [
      '/my-company/my-project.git',
      '/my-company/my-project.git/info/refs',
      '/my-company/my-project.git/',
    ]) {
      expect(learn(model, p)).toMatchObject({ path: '/my-company', cell: 'cell_eu0', source: 'routable' });
    }
    expect(learn(model, '/my-company/my-project.git/info/refs?service=git-upload-pack').path).toBe(
      '/my-company',
    );
  });

  it('answers with the canonical case of the namespace', () => {
    expect(learn(model, '/My-Company/my-project').path).toBe('/my-company');
  });

  it('routes organization paths by the organization', () => {
    expect(learn(model, '/organizations/my-organization/projects')).toEqual({
      path: '/organizations/my-organization',
      cell: 'cell_eu0',
      source: 'routable',
      cache_ttl: 300,
    });
    expect(learn(model, '/organizations/nope/projects')).toEqual({
      path: '/organizations/nope',
      cell: 'cell_us0',
      source: 'fallback',
      cache_ttl: 60,
    });
  });

  it('answers fixed prefix routes and exact routes from the topology', () => {
    expect(learn(model, '/admin/users')).toEqual({
      path: '/admin',
      cell: 'cell_us0',
      source: 'fixed',
      cache_ttl: 3600,
    });
    expect(learn(model, '/explore')).toEqual({
      path: '/explore',
      cell: 'cell_eu1',
      source: 'fixed',
      cache_ttl: 3600,
    });
    expect(learn(model, '/-/profile')).toEqual({
      path: '/-/profile',
      cell: 'cell_us0',
      source: 'fixed',
      exact: true,
      cache_ttl: 3600,
    });
    // A prefix route matches whole segments only; an exact route matches only itself.
    expect(learn(model, '/administrator').source).toBe('fallback');
    expect(learn(model, '/-/profile/keys')).toEqual({
      path: '/-/profile/keys',
      cell: 'cell_us0',
      source: 'fallback',
      exact: true,
      cache_ttl: 60,
    });
  });

  it('sends unknown paths to the legacy cell', () => {
    expect(learn(model, '/unknown-thing/x')).toEqual({
      path: '/unknown-thing',
      cell: 'cell_us0',
      source: 'fallback',
      cache_ttl: 60,
    });
    expect(learn(model, '/')).toEqual({
      path: '/',
      cell: 'cell_us0',
      source: 'fallback',
      exact: true,
      cache_ttl: 0,
    });
  });

  it('decodes dotted names and strips one format suffix at the last dot where the route accepts one', () => {
    const m = demoModel(undefined, (t) => {
      t.namespaces.push({
        id: 31,
        path: 'john',
        name: 'John',
        kind: 'user',
        organization: 'my-organization',
      });
      // The demo's own user namespace john.doe, moved away from john's cell.
      const johnDoe = t.namespaces.find((n) => n.path === 'john.doe');
      if (johnDoe) johnDoe.organization = 'not-my-organization';
    });
    const johnDoe = { path: '/john.doe', cell: 'cell_us1', source: 'routable', cache_ttl: 300 };
    for (const p of [
      '/john.doe',
      '/john.doe.json',
      '/john.doe/bar/john.doe',
      '/john.doe/p.json',
      '/john.doe/p.git',
    ]) {
      expect(learn(m, p), p).toEqual(johnDoe);
    }
    expect(learn(m, '/john.atom')).toMatchObject({ path: '/john', cell: 'cell_eu0' });
    // A suffix that is not a format stays part of the name.
    expect(learn(m, '/john.doe.unknownformat')).toMatchObject({
      path: '/john.doe.unknownformat',
      source: 'fallback',
    });
    expect(learn(m, '/users/john.doe.json')).toMatchObject({ path: '/users', source: 'fixed' });
    expect(learn(m, '/-/profile.json')).toEqual({
      path: '/-/profile',
      cell: 'cell_us0',
      source: 'fixed',
      exact: true,
      cache_ttl: 3600,
    });
  });

  it('routes API project paths by the project, by id or by URL-encoded full path', () => {
    const eu0 = { path: '/api/v4/projects/3', cell: 'cell_eu0', source: 'routable', cache_ttl: 300 };
    expect(learn(model, '/api/v4/projects/3')).toEqual(eu0);
    expect(learn(model, '/api/v4/projects/3.json')).toEqual(eu0);
    expect(learn(model, '/api/v4/projects/my-company%2Fmy-project')).toEqual({
      ...eu0,
      path: '/api/v4/projects/my-company%2Fmy-project',
    });
    expect(learn(model, '/api/v4/projects/5')).toMatchObject({ cell: 'cell_us1' });
    expect(learn(model, '/api/v4/projects/999')).toEqual({
      path: '/api/v4/projects/999',
      cell: 'cell_us0',
      source: 'fallback',
      cache_ttl: 60,
    });
  });

  it('never caches routes whose cell depends on the session or token', () => {
    for (const p of ['/', '/dashboard', '/api/v4/user', '/api/v4/user/personal_access_tokens']) {
      expect(learn(model, p, p.includes('tokens') ? 'POST' : 'GET'), p).toEqual({
        path: p,
        cell: 'cell_us0',
        source: 'fallback',
        exact: true,
        cache_ttl: 0,
      });
    }
  });

  it('never answers a prefix for a reserved top-level word', () => {
    for (const p of ['/api', '/api/unknown', '/organizations/x/unknown', '/dashboard/projects']) {
      expect(learn(model, p), p).toMatchObject({ path: p, source: 'fallback', exact: true });
    }
  });

  it('classifies a path by its routes of any method when none of the asked method matches', () => {
    expect(learn(model, '/my-company/my-project', 'POST')).toMatchObject({
      path: '/my-company',
      cell: 'cell_eu0',
    });
    expect(learn(model, '/my-company/my-project.git/ssh-receive-pack', 'POST')).toMatchObject({
      path: '/my-company',
      cell: 'cell_eu0',
    });
  });

  it('follows an organization that moved to another cell', () => {
    const m = demoModel();
    m.moveOrganization('my-organization', 'cell_eu1');
    expect(learn(m, '/my-company/my-project').cell).toBe('cell_eu1');
    expect(learn(m, '/organizations/my-organization').cell).toBe('cell_eu1');
  });
});

describe('GET /api/v4/internal/cells/learn', () => {
  const apps = CELLS.map((cell) => testApp(model, cell));
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  it('gives the same answer on every cell', async () => {
    const headers = await shellHeaders();
    for (const app of apps) {
      const res = await app.inject({
        url: '/api/v4/internal/cells/learn?method=GET&path_info=%2FMy-Company%2Fmy-project.git%2Finfo%2Frefs',
        headers,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        path: '/my-company',
        cell: 'cell_eu0',
        source: 'routable',
        cache_ttl: 300,
      });
    }
  });

  it('requires path_info and the shell JWT', async () => {
    const app = apps[0]!;
    const missing = await app.inject({
      url: '/api/v4/internal/cells/learn?method=GET',
      headers: await shellHeaders(),
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toMatch(/path_info/);
    const unauthenticated = await app.inject({ url: '/api/v4/internal/cells/learn?path_info=/my-company' });
    expect(unauthenticated.statusCode).toBe(401);
  });
});
