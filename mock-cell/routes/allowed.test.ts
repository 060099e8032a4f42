import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { AccessMessages } from '../access.js';
import {
  CELLS,
  type DemoUser,
  demoModel,
  GITALY_TOKEN,
  keyIdOf,
  PROJECTS,
  shellHeaders,
  testApp,
} from '../test-support/fixtures.js';

const model = demoModel();
const apps = new Map<string, FastifyInstance>(CELLS.map((c) => [c, testApp(model, c)]));
afterAll(async () => {
  await Promise.all([...apps.values()].map((a) => a.close()));
});

async function allowed(cell: string, body: Record<string, unknown>) {
  const res = await apps.get(cell)!.inject({
    method: 'POST',
    url: '/api/v4/internal/allowed',
    headers: await shellHeaders(),
    payload: body,
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

const owningCell = (path: string) => model.cellOfProject(model.projectByPath(path)!).name;

/** Expected status of [download (upload-pack and upload-archive), push (receive-pack, _any)]. */
type Expect = [number, number];
const ALL: Expect = [200, 200];
const READ: Expect = [200, 401];
const HIDDEN: Expect = [404, 404];

/** john.doe is in the demo for the routing tests: the mock does not model personal-namespace ownership. */
const MATRIX: Record<Exclude<DemoUser, 'john.doe'>, Record<(typeof PROJECTS)[number]['path'], Expect>> = {
  root: {
    'gitlab-test': ALL,
    gitlab: ALL,
    'my-project': ALL,
    'my-other-project': ALL,
    'not-my-project': ALL,
    notes: ALL,
    'www.site': ALL,
  },
  alice: {
    'gitlab-test': READ,
    gitlab: READ,
    'my-project': ALL,
    'my-other-project': HIDDEN,
    'not-my-project': HIDDEN,
    notes: READ,
    'www.site': READ,
  },
  bob: {
    'gitlab-test': ALL,
    gitlab: ALL,
    'my-project': HIDDEN,
    'my-other-project': HIDDEN,
    'not-my-project': HIDDEN,
    notes: READ,
    'www.site': READ,
  },
  carol: {
    'gitlab-test': READ,
    gitlab: READ,
    'my-project': READ,
    'my-other-project': HIDDEN,
    'not-my-project': HIDDEN,
    notes: READ,
    'www.site': READ,
  },
  dave: {
    'gitlab-test': READ,
    gitlab: READ,
    'my-project': ALL,
    'my-other-project': ALL,
    'not-my-project': HIDDEN,
    notes: READ,
    'www.site': READ,
  },
};

describe('POST /api/v4/internal/allowed: the demo access matrix', () => {
  for (const [user, row] of Object.entries(MATRIX) as [DemoUser, Record<string, Expect>][]) {
    for (const project of PROJECTS) {
      const [pull, push] = row[project.path] as Expect;
      const path = `${project.namespace}/${project.path}`;
      it(`${user} on ${path}: download ${pull}, push ${push}`, async () => {
        const cell = owningCell(path);
        const base = {
          project: `/${path}.git`,
          key_id: String(keyIdOf(user)),
          changes: '_any',
          protocol: 'ssh',
        };
        const results = [
          await allowed(cell, { ...base, action: 'git-upload-pack' }),
          await allowed(cell, { ...base, action: 'git-upload-archive' }),
          await allowed(cell, { ...base, action: 'git-receive-pack' }),
        ];
        expect(results.map((r) => r.status)).toEqual([pull, pull, push]);
        for (const r of results) {
          if (r.status === 404)
            expect(r.body).toEqual({ status: false, message: AccessMessages.projectNotFound });
          if (r.status === 401) expect(r.body).toEqual({ status: false, message: AccessMessages.pushCode });
          if (r.status === 200) expect(r.body.gl_project_path).toBe(path);
        }
      });
    }
  }

  it("refuses Guests the code of a private project with GitLab's message", async () => {
    const m = demoModel('/nonexistent', (t) => {
      t.members.push({ user: 'bob', project: 'my-company/my-project', accessLevel: 10 });
    });
    const app = testApp(m, 'cell_eu0');
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v4/internal/allowed',
        headers: await shellHeaders(),
        payload: {
          action: 'git-upload-pack',
          project: 'my-company/my-project',
          username: 'bob',
          changes: '_any',
        },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        status: false,
        message: 'You are not allowed to download code from this project.',
      });
    } finally {
      await app.close();
    }
  });
});

describe('POST /api/v4/internal/allowed: payload and identity', () => {
  it('answers a key-authenticated success with the full GitLab payload', async () => {
    const res = await allowed('cell_eu0', {
      action: 'git-upload-pack',
      project: '/my-company/my-project.git',
      key_id: '2',
      changes: '_any',
      protocol: 'ssh',
      check_ip: '203.0.113.9',
    });
    expect(res.status).toBe(200);
    const repository = {
      storage_name: 'default',
      relative_path: hashedRepoPath(3),
      git_object_directory: '',
      git_alternate_object_directories: [],
      gl_repository: 'project-3',
      gl_project_path: 'my-company/my-project',
    };
    expect(res.body).toEqual({
      status: true,
      gl_repository: 'project-3',
      gl_project_path: 'my-company/my-project',
      gl_project_id: 3,
      gl_root_namespace_id: 3,
      gl_id: 'user-2',
      gl_username: 'alice',
      git_config_options: ['uploadpack.allowFilter=true', 'uploadpack.allowAnySHA1InWant=true'],
      gitaly: { repository, address: 'tcp://127.0.0.1:9003', token: GITALY_TOKEN, features: {} },
      gl_console_messages: [],
      need_audit: false,
      gl_key_type: 'key',
      gl_key_id: 2,
    });
  });

  it('accepts username and user_id (numbers or strings) and then omits the key fields', async () => {
    for (const identity of [{ username: 'alice' }, { user_id: '2' }, { user_id: 2 }, { key_id: 2 }]) {
      const res = await allowed('cell_eu0', {
        action: 'git-receive-pack',
        project: 'my-company/my-project',
        ...identity,
      });
      expect(res.status).toBe(200);
      expect(res.body.gl_id).toBe('user-2');
      expect('gl_key_id' in res.body).toBe('key_id' in identity);
    }
  });

  it('accepts every repository path form GitLab Shell may send', async () => {
    for (const project of [
      '/my-company/my-project.git',
      'my-company/my-project.git',
      'my-company/my-project',
      'My-Company/my-project',
    ]) {
      const res = await allowed('cell_eu0', { action: 'git-upload-pack', project, username: 'alice' });
      expect(res.status, project).toBe(200);
    }
  });

  it('denies unknown keys and users with a 404 that says what was not found', async () => {
    expect(
      await allowed('cell_eu0', {
        action: 'git-upload-pack',
        project: 'my-company/my-project',
        key_id: '999',
      }),
    ).toMatchObject({
      status: 404,
      body: { status: false, message: 'Could not find the given key' },
    });
    expect(
      await allowed('cell_eu0', {
        action: 'git-upload-pack',
        project: 'my-company/my-project',
        username: 'zoe',
      }),
    ).toMatchObject({
      status: 404,
      body: { status: false, message: 'Could not find the given user' },
    });
    expect(
      await allowed('cell_eu0', { action: 'git-upload-pack', project: 'my-company/my-project' }),
    ).toMatchObject({
      status: 404,
      body: { status: false, message: 'No user or key was provided.' },
    });
  });

  it('answers a missing project exactly like a hidden one', async () => {
    const missing = await allowed('cell_eu0', {
      action: 'git-upload-pack',
      project: 'my-company/ghost.git',
      username: 'alice',
    });
    const hidden = await allowed('cell_eu0', {
      action: 'git-upload-pack',
      project: 'my-company/my-other-project.git',
      username: 'alice',
    });
    expect(missing).toMatchObject({
      status: 404,
      body: { status: false, message: AccessMessages.projectNotFound },
    });
    expect(hidden.status).toBe(missing.status);
    expect(hidden.body).toEqual(missing.body);
    const invalid = await allowed('cell_eu0', {
      action: 'git-upload-pack',
      project: '../../etc/passwd',
      username: 'alice',
    });
    expect(invalid.status).toBe(404);
  });

  it('refuses commands other than the three git actions', async () => {
    const res = await allowed('cell_eu0', {
      action: 'git-lfs-authenticate',
      project: 'my-company/my-project',
      username: 'alice',
    });
    expect(res).toMatchObject({
      status: 401,
      body: { status: false, message: "The command you're trying to execute is not allowed." },
    });
  });

  it('rejects a body without action', async () => {
    const res = await allowed('cell_eu0', { project: 'my-company/my-project', username: 'alice' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: false });
  });
});

describe("POST /api/v4/internal/allowed: another cell's project", () => {
  it('answers 421 with X-Gitlab-Cell-Redirect naming the owning cell', async () => {
    const res = await allowed('cell_eu0', {
      action: 'git-upload-pack',
      project: 'not-my-company/not-my-project',
      username: 'root',
    });
    expect(res.status).toBe(421);
    expect(res.headers['x-gitlab-cell-redirect']).toBe('cell_us1');
    expect(res.body).toEqual({
      status: false,
      message: 'The project not-my-company/not-my-project is served by cell cell_us1.',
    });
  });

  it('still answers 404 for a project that exists nowhere', async () => {
    const res = await allowed('cell_us1', {
      action: 'git-upload-pack',
      project: 'nobody/nothing',
      username: 'root',
    });
    expect(res.status).toBe(404);
    expect(res.headers['x-gitlab-cell-redirect']).toBeUndefined();
  });

  it('follows an organization move: the old cell redirects, the new one serves', async () => {
    const m = demoModel();
    const eu0 = testApp(m, 'cell_eu0');
    const eu1 = testApp(m, 'cell_eu1');
    try {
      m.moveOrganization('my-organization', 'cell_eu1');
      const payload = { action: 'git-upload-pack', project: 'my-company/my-project', username: 'alice' };
      const headers = await shellHeaders();
      const old = await eu0.inject({ method: 'POST', url: '/api/v4/internal/allowed', headers, payload });
      expect(old.statusCode).toBe(421);
      expect(old.headers['x-gitlab-cell-redirect']).toBe('cell_eu1');
      const moved = await eu1.inject({ method: 'POST', url: '/api/v4/internal/allowed', headers, payload });
      expect(moved.statusCode).toBe(200);
      expect(moved.json().gitaly.address).toBe('tcp://127.0.0.1:9004');
    } finally {
      await Promise.all([eu0.close(), eu1.close()]);
    }
  });
});
