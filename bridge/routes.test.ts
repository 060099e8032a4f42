import { describe, expect, it } from 'vitest';
import type { GitService } from '../lib/gitaly/index.js';
import { matchRoute, type RouteHandler, routeTable } from './routes.js';

/** Stub handlers, each recognisable by what it was made for. */
const handlers = new Map<string, RouteHandler>();
const stub = (name: string): RouteHandler => {
  const h: RouteHandler = async () => ({ outcome: 'ok' });
  handlers.set(name, h);
  return h;
};
const table = routeTable(
  { tunnel: (service: GitService) => stub(service), health: stub('health'), proxy: stub('proxy') },
  { maxReceivePackBytes: 4096 },
);

describe('routeTable', () => {
  it('has every route once, in order, with stable ids and backends', () => {
    expect(table.map((r) => [r.id, r.backend])).toEqual([
      ['ssh_upload_pack', 'gitaly'],
      ['ssh_receive_pack', 'gitaly'],
      ['ssh_upload_archive', 'gitaly'],
      ['health', 'self'],
      ['proxy', 'rails'],
    ]);
  });

  it('binds each row to its handler and options', () => {
    const byId = Object.fromEntries(table.map((r) => [r.id, r]));
    expect(byId.ssh_upload_pack?.handler).toBe(handlers.get('upload-pack'));
    expect(byId.ssh_receive_pack?.handler).toBe(handlers.get('receive-pack'));
    expect(byId.ssh_upload_archive?.handler).toBe(handlers.get('upload-archive'));
    expect(byId.health?.handler).toBe(handlers.get('health'));
    expect(byId.proxy?.handler).toBe(handlers.get('proxy'));
    expect(byId.ssh_receive_pack?.options).toEqual({ allowGeo: true, bodyLimit: 4096 });
    expect(byId.ssh_upload_pack?.options).toEqual({ allowGeo: true });
    expect(byId.ssh_upload_archive?.options).toEqual({ allowGeo: true });
    expect(byId.health?.options).toEqual({});
    expect(byId.proxy?.options).toEqual({});
  });
});

describe('matchRoute', () => {
  it.each([
    ['POST', '/group/project.git/ssh-upload-pack', 'ssh_upload_pack', 'group/project'],
    ['POST', '/a/b/c.git/ssh-receive-pack?x=1', 'ssh_receive_pack', 'a/b/c'],
    ['POST', '/p.git/ssh-upload-archive', 'ssh_upload_archive', 'p'],
    ['POST', '/weird.git/name.git/ssh-upload-pack', 'ssh_upload_pack', 'weird.git/name'],
  ])('%s %s → %s (project %s)', (method, url, id, project) => {
    const m = matchRoute(table, method, url);
    expect(m?.route.id).toBe(id);
    expect(m?.params).toEqual({ project });
    expect(m?.path).toBe(url.split('?')[0]);
  });

  it.each([
    ['GET', '/-/bridge/health'],
    ['HEAD', '/-/bridge/health'],
    ['GET', '/-/bridge/health?probe=1'],
  ])('%s %s → health', (method, url) => {
    const m = matchRoute(table, method, url);
    expect(m?.route.id).toBe('health');
    expect(m?.params).toEqual({});
  });

  it.each([
    ['GET', '/group/project.git/ssh-upload-pack'],
    ['PUT', '/group/project.git/ssh-receive-pack'],
    ['POST', '/group/project.git/git-upload-pack'],
    ['POST', '/.git/ssh-upload-pack'],
    ['POST', '/group/project/ssh-upload-pack'],
    ['POST', '/group/project.git/ssh-upload-pack/extra'],
    ['POST', '/api/v4/internal/allowed'],
    ['POST', '/-/bridge/health'],
    ['GET', '/-/bridge/health/'],
    ['GET', '/-/bridge/healthz'],
    ['DELETE', '/anything'],
    ['OPTIONS', '*'],
    [undefined, undefined],
  ])('%s %s → the Rails catch-all', (method, url) => {
    const m = matchRoute(table, method, url);
    expect(m?.route.id).toBe('proxy');
    expect(m?.route.backend).toBe('rails');
  });
});

describe('the smart HTTP git rows (Workhorse: method, path and content type)', () => {
  const quiet =
    (_name: string): RouteHandler =>
    async () => ({ outcome: 'ok' });
  const git = routeTable(
    {
      tunnel: (service: GitService) => quiet(service),
      health: quiet('health'),
      proxy: quiet('proxy'),
      gitHttp: {
        infoRefs: quiet('info-refs'),
        uploadPack: quiet('git-upload'),
        receivePack: quiet('git-receive'),
      },
    },
    { maxReceivePackBytes: 4096 },
  );
  const id = (method: string, url: string, type?: string) => matchRoute(git, method, url, type)?.route.id;

  it('come first and match only their method and content type (parameters ignored)', () => {
    expect(git.slice(0, 3).map((r) => r.id)).toEqual([
      'git_info_refs',
      'git_upload_pack',
      'git_receive_pack',
    ]);
    expect(id('GET', '/a/b.git/info/refs?service=git-upload-pack')).toBe('git_info_refs');
    expect(id('POST', '/a/b/c.git/git-upload-pack', 'application/x-git-upload-pack-request')).toBe(
      'git_upload_pack',
    );
    expect(id('POST', '/a.git/git-receive-pack', 'application/x-git-receive-pack-request; charset=x')).toBe(
      'git_receive_pack',
    );
  });

  it('anything else falls through to Rails', () => {
    expect(id('POST', '/a/b.git/info/refs')).toBe('proxy');
    expect(id('GET', '/a/b.git/git-upload-pack')).toBe('proxy');
    expect(id('POST', '/a/b.git/git-upload-pack', 'text/plain')).toBe('proxy');
    expect(id('POST', '/a/b.git/git-receive-pack', 'application/x-git-upload-pack-request')).toBe('proxy');
    expect(id('POST', '/.git/git-upload-pack', 'application/x-git-upload-pack-request')).toBe('proxy');
  });
});
