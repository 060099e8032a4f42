import { SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { signShellJwt } from '../../lib/jwt.js';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { AccessMessages } from '../access.js';
import {
  demoModel,
  GITALY_TOKEN,
  preauthHeaders,
  shellKey,
  testApp,
  workhorseKey,
} from '../test-support/fixtures.js';

const model = demoModel();
const eu0 = testApp(model, 'cell_eu0');
const us0 = testApp(model, 'cell_us0');
afterAll(async () => {
  await Promise.all([eu0.close(), us0.close()]);
});

async function preauth(url: string, headers: Record<string, string>, app = eu0) {
  const res = await app.inject({ method: 'POST', url, headers });
  return { status: res.statusCode, type: res.headers['content-type'], body: res.body, headers: res.headers };
}

const UPLOAD = '/my-company/my-project.git/ssh-upload-pack';

describe('pre-authorization success', () => {
  it('answers the Workhorse JSON with the exact content type', async () => {
    const res = await preauth(UPLOAD, {
      ...(await preauthHeaders('user-2')),
      'x-forwarded-for': '198.51.100.7, 10.0.0.1',
    });
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/vnd.gitlab-workhorse+json');
    expect(JSON.parse(res.body)).toEqual({
      GL_ID: 'user-2',
      GL_REPOSITORY: 'project-3',
      GL_USERNAME: 'alice',
      ShowAllRefs: false,
      NeedAudit: false,
      Repository: {
        storage_name: 'default',
        relative_path: hashedRepoPath(3),
        git_object_directory: '',
        git_alternate_object_directories: [],
        gl_repository: 'project-3',
        gl_project_path: 'my-company/my-project',
      },
      GitConfigOptions: [],
      GitalyServer: {
        address: 'tcp://127.0.0.1:9003',
        token: GITALY_TOKEN,
        call_metadata: { user_id: '2', username: 'alice', remote_ip: '198.51.100.7' },
      },
      ProjectID: 3,
      RootNamespaceID: 3,
    });
  });

  it('authorizes receive-pack and upload-archive, and accepts key-<id> gl_ids', async () => {
    const receive = await preauth(
      '/my-company/my-project.git/ssh-receive-pack',
      await preauthHeaders('user-2'),
    );
    expect(receive.status).toBe(200);
    const archive = await preauth(
      '/my-company/my-project.git/ssh-upload-archive',
      await preauthHeaders('key-2'),
    );
    expect(archive.status).toBe(200);
    expect(JSON.parse(archive.body).GL_ID).toBe('user-2');
  });

  it('ignores a request body and its content type', async () => {
    const res = await eu0.inject({
      method: 'POST',
      url: UPLOAD,
      headers: {
        ...(await preauthHeaders('user-2')),
        'content-type': 'application/x-git-upload-pack-request',
      },
      payload: '0000',
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('pre-authorization failures', () => {
  it('answers 403 without a valid workhorse JWT', async () => {
    const shell = { 'gitlab-shell-api-request': await signShellJwt(shellKey, 'user-2') };
    const stale = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('gitlab-workhorse')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
      .sign(workhorseKey);
    const wrongKey = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('gitlab-workhorse')
      .setIssuedAt()
      .sign(shellKey);
    for (const token of [undefined, stale, wrongKey]) {
      const res = await preauth(
        UPLOAD,
        token === undefined ? shell : { ...shell, 'gitlab-workhorse-api-request': token },
      );
      expect(res.status).toBe(403);
      expect(res.type).toMatch(/^text\/plain/);
    }
  });

  it('answers 404 "Not found" without a shell JWT naming an existing user', async () => {
    const workhorseOnly = await preauthHeaders();
    const cases = [
      workhorseOnly,
      { ...workhorseOnly, 'gitlab-shell-api-request': await signShellJwt(shellKey) },
      await preauthHeaders('user-999'),
      await preauthHeaders('deploy-key-1'),
      {
        ...workhorseOnly,
        'gitlab-shell-api-request': await signShellJwt(
          shellKey,
          'user-2',
          Math.floor(Date.now() / 1000) - 600,
        ),
      },
    ];
    for (const headers of cases) {
      const res = await preauth(UPLOAD, headers);
      expect(res.status).toBe(404);
      expect(res.type).toMatch(/^text\/plain/);
      expect(res.body).toBe('Not found');
    }
  });

  it('verifies the shell JWT itself on ssh-upload-pack/ssh-receive-pack, as Rails (forged, foreign issuer, username-)', async () => {
    const workhorseOnly = await preauthHeaders();
    const sign = (iss: string, key: Uint8Array) =>
      new SignJWT({ gl_id: 'user-2' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(iss)
        .setIssuedAt()
        .setExpirationTime('60s')
        .sign(key);
    const forged = await sign('gitlab-shell', new TextEncoder().encode('not-the-shell-secret-0123456789ab'));
    const foreign = await sign('gitlab-workhorse', shellKey);
    for (const route of ['ssh-upload-pack', 'ssh-receive-pack']) {
      const url = `/my-company/my-project.git/${route}`;
      for (const jwt of [forged, foreign, await signShellJwt(shellKey, 'username-alice')]) {
        const res = await preauth(url, { ...workhorseOnly, 'gitlab-shell-api-request': jwt });
        expect({ route, status: res.status, body: res.body }).toEqual({
          route,
          status: 404,
          body: 'Not found',
        });
        expect(res.type).toMatch(/^text\/plain/);
      }
      expect((await preauth(url, await preauthHeaders('key-1'))).status).not.toBe(404);
    }
    // ssh-upload-archive is ours, not gitlab-shell's: the bridge may name a user by username.
    const archive = await preauth(
      '/my-company/my-project.git/ssh-upload-archive',
      await preauthHeaders('username-alice'),
    );
    expect(archive.status).toBe(200);
  });

  it('answers 403 with the message when the user may not perform the action', async () => {
    const res = await preauth('/my-company/my-project.git/ssh-receive-pack', await preauthHeaders('user-4'));
    expect(res).toMatchObject({ status: 403, body: AccessMessages.pushCode });
    expect(res.type).toMatch(/^text\/plain/);
  });

  it('answers 404 with the message for a project the user cannot see or that does not exist', async () => {
    for (const url of [
      '/my-company/my-other-project.git/ssh-upload-pack',
      '/my-company/ghost.git/ssh-upload-pack',
    ]) {
      const res = await preauth(url, await preauthHeaders('user-2'));
      expect(res).toMatchObject({ status: 404, body: AccessMessages.projectNotFound });
    }
  });

  it('answers 421 naming the owning cell when another cell owns the project', async () => {
    const res = await preauth(UPLOAD, await preauthHeaders('user-2'), us0);
    expect(res.status).toBe(421);
    expect(res.headers['x-gitlab-cell-redirect']).toBe('cell_eu0');
    expect(res.type).toMatch(/^text\/plain/);
    expect(res.body).toBe('The project my-company/my-project is served by cell cell_eu0.');
  });

  it('leaves other paths to the 404 handler', async () => {
    for (const url of [
      '/my-company/my-project.git/ssh-something',
      '/my-company/my-project/ssh-upload-pack',
      '/.git/ssh-upload-pack',
    ]) {
      const res = await preauth(url, await preauthHeaders('user-2'));
      expect(res.status, url).toBe(404);
      expect(JSON.parse(res.body)).toEqual({ message: '404 Not Found' });
    }
    const get = await eu0.inject({ url: UPLOAD, headers: await preauthHeaders('user-2') });
    expect(get.statusCode).toBe(404);
  });
});
