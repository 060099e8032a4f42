import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signWorkhorseJwt } from '../../lib/jwt.js';
import { demoModel, tempDir, testApp, workhorseKey } from '../test-support/fixtures.js';
import { objectPath } from './lfs-store.js';

/** The LFS batch API, download and upload authorize/finalize of the mock cell (in-process). */

const tmp = tempDir();
const model = demoModel(tmp.dir);
const eu0 = testApp(model, 'cell_eu0');
const us0 = testApp(model, 'cell_us0');
afterAll(async () => {
  await Promise.all([eu0.close(), us0.close()]);
  tmp.cleanup();
});

const project = model.projectByPath('my-company/my-project');
if (!project) throw new Error('demo topology changed');
const ALICE = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
const STORED = 'b'.repeat(64);
const stored = objectPath(model, project, STORED);
mkdirSync(dirname(stored), { recursive: true });
writeFileSync(stored, 'hello');

function batch(body: unknown, auth?: string, app = eu0, path = '/my-company/my-project.git') {
  return app.inject({
    method: 'POST',
    url: `${path}/info/lfs/objects/batch`,
    headers: { 'content-type': 'application/vnd.git-lfs+json', ...(auth ? { authorization: auth } : {}) },
    payload: JSON.stringify(body),
  });
}

describe('LFS batch API', () => {
  it('download: an href with the client’s Authorization for a stored object, a 404 error for a missing one', async () => {
    const missing = 'c'.repeat(64);
    const res = await batch(
      {
        operation: 'download',
        objects: [
          { oid: STORED, size: 5 },
          { oid: missing, size: 1 },
        ],
      },
      ALICE,
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.git-lfs\+json/);
    const [found, absent] = res.json().objects;
    expect(found.actions.download).toMatchObject({
      href: `http://gitlab.example.test:8080/my-company/my-project.git/gitlab-lfs/objects/${STORED}`,
      header: { Authorization: ALICE },
    });
    expect(absent.error.code).toBe(404);
  });

  it('upload: no action for a stored object, an upload href with octet-stream for a new one', async () => {
    const fresh = 'd'.repeat(64);
    const res = await batch(
      {
        operation: 'upload',
        objects: [
          { oid: STORED, size: 5 },
          { oid: fresh, size: 9 },
        ],
      },
      ALICE,
    );
    const [have, want] = res.json().objects;
    expect(have.actions).toBeUndefined();
    expect(want.actions.upload.href).toMatch(new RegExp(`/gitlab-lfs/objects/${fresh}/9$`));
    expect(want.actions.upload.header['Content-Type']).toBe('application/octet-stream');
  });

  it('anonymous: 401 with the Basic challenge on a private project, a download on a public one', async () => {
    const res = await batch({ operation: 'download', objects: [] });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="GitLab"');
    const pub = await batch(
      { operation: 'download', objects: [] },
      undefined,
      us0,
      '/gitlab-org/gitlab-test.git',
    );
    expect(pub.statusCode).toBe(200);
    const push = await batch(
      { operation: 'upload', objects: [] },
      undefined,
      us0,
      '/gitlab-org/gitlab-test.git',
    );
    expect(push.statusCode).toBe(401);
  });

  it('a Reporter cannot upload; locks answer 501', async () => {
    const carol = `Basic ${Buffer.from('carol:carol-password').toString('base64')}`;
    expect((await batch({ operation: 'upload', objects: [] }, carol)).statusCode).toBe(403);
    const locks = await eu0.inject({
      method: 'POST',
      url: '/my-company/my-project.git/info/lfs/locks/verify',
      headers: { authorization: ALICE },
    });
    expect(locks.statusCode).toBe(501);
  });

  it('upload authorize needs the Workhorse JWT and answers the TempPath; finalize refuses a file outside it', async () => {
    const url = `/my-company/my-project.git/gitlab-lfs/objects/${'e'.repeat(64)}/3`;
    const noJwt = await eu0.inject({
      method: 'PUT',
      url: `${url}/authorize`,
      headers: { authorization: ALICE },
    });
    expect(noJwt.statusCode).toBe(403);
    const jwt = await signWorkhorseJwt(workhorseKey);
    const ok = await eu0.inject({
      method: 'PUT',
      url: `${url}/authorize`,
      headers: { authorization: ALICE, 'gitlab-workhorse-api-request': jwt },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toBe('application/vnd.gitlab-workhorse+json');
    expect(ok.json()).toMatchObject({ TempPath: expect.stringContaining('@lfs-objects'), LfsSize: 3 });
    const outside = await eu0.inject({
      method: 'PUT',
      url,
      headers: {
        authorization: ALICE,
        'gitlab-workhorse-api-request': jwt,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: `file.path=${encodeURIComponent(stored)}`,
    });
    expect(outside.statusCode).toBe(422);
  });
});
