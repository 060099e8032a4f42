import { describe, expect, it } from 'vitest';
import { compileSpec, matchSpec, normalizePath, parseSpec, snapshotEntry } from './spec.js';

describe('snapshotEntry (cells-routing.md §5 examples)', () => {
  it.each([
    ['/', { template: '/', example: '/' }],
    [
      '/*namespace_id/:project_id(.:format)',
      {
        template: '/*namespace_id/:project_id',
        example: '/foo/bar/foo',
        acceptsFormat: true,
        dottedExample: '/john.doe/bar/john.doe',
      },
    ],
    [
      '/*namespace_id/:project_id/-/analytics/dashboards(/*vueroute)',
      {
        template: '/*namespace_id/:project_id/-/analytics/dashboards(/*vueroute)',
        example: '/foo/bar/foo/-/analytics/dashboards/foo/bar',
        dottedExample: '/john.doe/bar/john.doe/-/analytics/dashboards/john.doe/bar',
      },
    ],
    [
      '/api/:version/projects/:id/runners(.:format)',
      {
        template: '/api/:version/projects/:id/runners',
        example: '/api/v4/projects/foo/runners',
        acceptsFormat: true,
        dottedExample: '/api/v4/projects/john.doe/runners',
      },
    ],
    [
      '/*namespace_id/:project_id/-/archive/*id.:format',
      {
        template: '/*namespace_id/:project_id/-/archive/*id.:format',
        example: '/foo/bar/foo/-/archive/foo/bar',
        acceptsFormat: true,
        dottedExample: '/john.doe/bar/john.doe/-/archive/john.doe/bar',
      },
    ],
    ['/users/sign_in', { template: '/users/sign_in', example: '/users/sign_in' }],
    [
      '/users/sign_in(.:format)',
      { template: '/users/sign_in', example: '/users/sign_in', acceptsFormat: true },
    ],
    [
      '(/-/jira)/*namespace_id/:project_id',
      {
        template: '(/-/jira)/*namespace_id/:project_id',
        example: '/-/jira/foo/bar/foo',
        dottedExample: '/-/jira/john.doe/bar/john.doe',
      },
    ],
    ['/a(/b(/:c))/', { template: '/a(/b(/:c))/', example: '/a/b/foo', dottedExample: '/a/b/john.doe' }],
    ['/help/\\(x\\)', { template: '/help/\\(x\\)', example: '/help/(x)' }],
  ])('%s', (spec, entry) => {
    expect(snapshotEntry(spec)).toEqual(entry);
  });
});

describe('compileSpec / matchSpec', () => {
  const project = compileSpec('/*namespace_id/:project_id(.:format)');

  it('splits one known format suffix at the last dot, only where the route accepts a format', () => {
    expect(matchSpec(project, '/john.doe/bar/john.doe')?.params).toEqual({
      namespace_id: 'john.doe/bar',
      project_id: 'john.doe',
    });
    expect(matchSpec(project, '/john.doe/bar/john.doe.json')).toMatchObject({
      params: { namespace_id: 'john.doe/bar', project_id: 'john.doe' },
      format: 'json',
    });
    expect(matchSpec(project, '/a/b.json.json')).toMatchObject({
      params: { project_id: 'b.json' },
      format: 'json',
    });
    expect(matchSpec(project, '/a/b.tar')?.params.project_id).toBe('b.tar');
    const noFormat = compileSpec('/*namespace_id/:project_id/-/analytics');
    expect(matchSpec(noFormat, '/a/b.json/-/analytics')?.params.project_id).toBe('b.json');
    expect(matchSpec(noFormat, '/a/b/-/analytics.json')).toBeUndefined();
  });

  it('requires an inline format and keeps optional groups optional', () => {
    const archive = compileSpec('/*namespace_id/:project_id/-/archive/*id.:format');
    expect(matchSpec(archive, '/g/p/-/archive/main/p-main.zip')).toMatchObject({
      params: { id: 'main/p-main' },
      format: 'zip',
    });
    expect(matchSpec(archive, '/g/p/-/archive/main/p-main')).toBeUndefined();
    const vue = compileSpec('/*namespace_id/:project_id/-/dashboards(/*vueroute)');
    expect(matchSpec(vue, '/g/p/-/dashboards')?.params).toEqual({ namespace_id: 'g', project_id: 'p' });
    expect(matchSpec(vue, '/g/p/-/dashboards/x/y')?.params.vueroute).toBe('x/y');
  });

  it('applies constraints, percent-decodes values and reports offsets of the raw values', () => {
    const api = compileSpec('/api/:version/projects/:id(.:format)', { version: 'v4' });
    const m = matchSpec(api, '/api/v4/projects/my-company%2Fmy-project.json');
    expect(m).toMatchObject({
      raw: { id: 'my-company%2Fmy-project' },
      params: { id: 'my-company/my-project' },
    });
    expect(m?.offsets.id).toEqual([17, 40]);
    expect(matchSpec(api, '/api/v3/projects/1')).toBeUndefined();
    expect(matchSpec(api, '/api/v4/projects/%E0%A4%A')).toBeUndefined();
  });

  it('refuses malformed specs', () => {
    expect(() => parseSpec('/a(/b')).toThrow(/unbalanced "\("/);
    expect(() => parseSpec('/a)/b')).toThrow(/unbalanced "\)"/);
    expect(() => parseSpec('/a/:')).toThrow(/without a name/);
  });
});

describe('normalizePath', () => {
  it('drops query and fragment, collapses slashes, strips the trailing slash, decodes unreserved escapes', () => {
    expect(normalizePath('/a//b/?x=1#f')).toBe('/a/b');
    expect(normalizePath('')).toBe('/');
    expect(normalizePath('a/b')).toBe('/a/b');
    expect(normalizePath('/my%2Dcompany/p%2Fq%2f')).toBe('/my-company/p%2Fq%2F');
  });
});
