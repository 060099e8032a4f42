import { describe, expect, it } from 'vitest';
import { matchTunnel } from './routes.js';

describe('matchTunnel', () => {
  it.each([
    ['/group/project.git/ssh-upload-pack', 'ssh_upload_pack', 'group/project'],
    ['/a/b/c.git/ssh-receive-pack?x=1', 'ssh_receive_pack', 'a/b/c'],
    ['/p.git/ssh-upload-archive', 'ssh_upload_archive', 'p'],
    ['/weird.git/name.git/ssh-upload-pack', 'ssh_upload_pack', 'weird.git/name'],
  ])('POST %s → %s (%s)', (url, id, project) => {
    const m = matchTunnel('POST', url);
    expect(m?.route.id).toBe(id);
    expect(m?.project).toBe(project);
  });

  it.each([
    ['GET', '/group/project.git/ssh-upload-pack'],
    ['POST', '/group/project.git/git-upload-pack'],
    ['POST', '/.git/ssh-upload-pack'],
    ['POST', '/group/project/ssh-upload-pack'],
    ['POST', '/group/project.git/ssh-upload-pack/extra'],
    ['POST', '/api/v4/internal/allowed'],
  ])('%s %s is not a tunnel', (method, url) => {
    expect(matchTunnel(method, url)).toBeUndefined();
  });
});
