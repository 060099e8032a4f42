import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TopologyFile } from '../../lib/contracts/topology-file.js';
import { LOCAL_NET, stackPaths, stackPorts } from '../../stack/layout.js';
import { worldTopology } from '../../stack/topology-file-convert.js';
import {
  DEMO_TOPOLOGY_FILE,
  demoWorld,
  loadTopologyFile,
  TopologyFileError,
  topologyFileProblems,
} from '../../stack/topology-file-load.js';
import { resolveTopologyFile } from '../../stack/topology-file-resolve.js';

const dir = mkdtempSync(join(tmpdir(), 'topology-file-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A good three-cell world; each test breaks a copy of it. */
function world(): TopologyFile {
  return {
    version: 1,
    cells: [
      { name: 'alpha', region: 'north', legacy: true },
      { name: 'beta', region: 'south' },
      { name: 'gamma', region: 'south', id: 7 },
    ],
    organizations: [
      { path: 'org-a', cell: 'alpha' },
      { path: 'org-b', cell: 'beta' },
    ],
    namespaces: [{ path: 'team', kind: 'group', organization: 'org-b' }],
    projects: [
      { path: 'team/app', visibility: 'public' },
      { path: 'zoe/notes', repository: { seed: 'empty' }, defaultBranch: 'trunk' },
    ],
    users: [
      { username: 'zoe', defaultOrganization: 'org-a' },
      { username: 'yann', name: 'Yann', defaultOrganization: 'org-b', admin: true },
    ],
    members: [{ user: 'zoe', namespace: 'team', role: 'developer' }],
  };
}

const UPLOAD_PACK_LIMIT = {
  rpc: '/gitaly.SSHService/SSHUploadPackWithSidechannel',
  maxPerRepo: 1,
  maxQueueSize: 5,
} as const;

const problems = (edit: (f: TopologyFile) => void) => {
  const f = world();
  edit(f);
  return topologyFileProblems(JSON.parse(JSON.stringify(f)), dir);
};

describe('topology file: structure (schema)', () => {
  it('accepts a good file and the demo', () => {
    expect(problems(() => {})).toEqual([]);
    expect(() => demoWorld()).not.toThrow();
  });

  it('lists every structural problem with its path in the file', () => {
    const bad = {
      version: 2,
      cells: [{ name: 'alpha', region: 3, color: 'red' }],
      organizations: [{ cell: 'alpha' }],
      projects: [{ path: 'no-slash' }, { path: 'a/b', repository: { seed: 'big' } }],
      members: [{ user: 'x', role: 'admin' }],
    };
    expect(topologyFileProblems(bad, dir)).toEqual(
      expect.arrayContaining([
        'version: must be 1',
        'cells[0].region: must be string',
        'cells[0].color: is not a known field',
        'organizations[0].path: is required',
        'projects[0].path: must match pattern "^[^/]+/[^/]+$"',
        'projects[1].repository.seed: must be one of "demo", "empty"',
        'members[0].role: must be one of "guest", "reporter", "developer", "maintainer", "owner"',
      ]),
    );
  });

  it("checks a cell's Gitaly concurrency limits: Gitaly's RPC names, its minimums", () => {
    const got = problems((f) =>
      Object.assign(f.cells[0] ?? {}, {
        gitaly: {
          concurrency: [
            { rpc: 'SSHUploadPack', maxPerRepo: 1, maxQueueSize: 1 },
            { ...UPLOAD_PACK_LIMIT, maxQueueSize: 0, maxQueueWaitMs: -1 },
          ],
        },
      }),
    );
    expect(got).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^cells\[0\]\.gitaly\.concurrency\[0\]\.rpc: must be one of "\/gitaly\.SSHService/,
        ),
        expect.stringMatching(/^cells\[0\]\.gitaly\.concurrency\[1\]\.maxQueueSize: must be >= 1/),
        expect.stringMatching(/^cells\[0\]\.gitaly\.concurrency\[1\]\.maxQueueWaitMs: must be >= 0/),
      ]),
    );
  });

  it("checks the routers' Shell JWT TTL: whole seconds, 1 to 3600", () => {
    for (const [ttl, message] of [
      [0, 'routers.shellJwtTtlSeconds: must be >= 1'],
      [2.5, 'routers.shellJwtTtlSeconds: must be integer'],
      [3601, 'routers.shellJwtTtlSeconds: must be <= 3600'],
    ] as const)
      expect(problems((f) => Object.assign(f, { routers: { shellJwtTtlSeconds: ttl } }))).toEqual([message]);
    expect(problems((f) => Object.assign(f, { routers: { shellJwtTtlSeconds: 5 } }))).toEqual([]);
  });

  it('names the root when the file is not an object', () => {
    expect(topologyFileProblems([], dir)).toEqual(['root: must be object']);
  });
});

describe('topology file: meaning', () => {
  const cases: Array<[string, (f: TopologyFile) => void, string]> = [
    [
      'a duplicate cell name',
      (f) => f.cells.push({ name: 'beta', region: 'x' }),
      'cells[3].name: "beta" is already used by cells[1]',
    ],
    [
      'a duplicate cell id',
      (f) => Object.assign(f.cells[2] ?? {}, { id: 2 }),
      'cells[2].id: "2" is already used by cells[1]',
    ],
    ['no legacy cell', (f) => delete f.cells[0]?.legacy, 'cells: no cell is legacy (exactly one must be)'],
    [
      'two legacy cells',
      (f) => Object.assign(f.cells[1] ?? {}, { legacy: true }),
      'cells[1].legacy: a second legacy cell (cells[0] is legacy already)',
    ],
    [
      'an unknown cell',
      (f) => Object.assign(f.organizations[1] ?? {}, { cell: 'delta' }),
      'organizations[1].cell: cell "delta" is not in cells',
    ],
    [
      'a duplicate organization',
      (f) => f.organizations.push({ path: 'ORG-A', cell: 'beta' }),
      'organizations[2].path: "ORG-A" is already used by organizations[0]',
    ],
    [
      'an unknown organization',
      (f) => f.namespaces?.push({ path: 'acme', kind: 'group', organization: 'org-z' }),
      'namespaces[1].organization: organization "org-z" is not in organizations',
    ],
    [
      'a project in a missing namespace',
      (f) => f.projects?.push({ path: 'acme/site' }),
      'projects[2].path: namespace "acme" is not in namespaces (nor a user\'s)',
    ],
    [
      'a duplicate project',
      (f) => f.projects?.push({ path: 'team/app' }),
      'projects[2].path: "team/app" is already used by projects[0]',
    ],
    [
      'a bare path that is not a bare repository',
      (f) => f.projects?.push({ path: 'team/lib', repository: { bare: 'nowhere.git' } }),
      `projects[2].repository.bare: "${join(dir, 'nowhere.git')}" is not a bare repository`,
    ],
    [
      'a duplicate username',
      (f) => f.users?.push({ username: 'Zoe', defaultOrganization: 'org-a' }),
      'users[2].username: "Zoe" is already used by users[0]',
    ],
    [
      'an unknown default organization',
      (f) => f.users?.push({ username: 'xavier', defaultOrganization: 'org-q' }),
      'users[2].defaultOrganization: organization "org-q" is not in organizations',
    ],
    [
      'a bad public key',
      (f) => Object.assign(f.users?.[0] ?? {}, { publicKey: 'ssh-ed25519 !!!' }),
      'users[0].publicKey: is not an OpenSSH public key line "<type> <base64> [comment]"',
    ],
    [
      'an unknown member',
      (f) => f.members?.push({ user: 'nobody', namespace: 'team', role: 'guest' }),
      'members[1].user: user "nobody" is not in users',
    ],
    [
      'a membership in an unknown project',
      (f) => f.members?.push({ user: 'yann', project: 'team/other', role: 'guest' }),
      'members[1].project: project "team/other" is not in projects',
    ],
    [
      'a membership of both kinds',
      (f) => f.members?.push({ user: 'yann', project: 'team/app', namespace: 'team', role: 'guest' }),
      'members[1]: exactly one of "namespace" (a group membership) and "project" must be set',
    ],
    [
      'a user namespace without its user',
      (f) => f.namespaces?.push({ path: 'ghost', kind: 'user', organization: 'org-a' }),
      'namespaces[1].path: user namespace "ghost" has no user of that username in users',
    ],
    [
      'geo for an unknown cell',
      (f) => Object.assign(f, { geo: [{ cell: 'omega' }] }),
      'geo[0].cell: cell "omega" is not in cells',
    ],
    [
      'a fixed route to an unknown cell',
      (f) => Object.assign(f, { fixedRoutes: [{ path: '/admin', cell: 'omega' }] }),
      'fixedRoutes[0].cell: cell "omega" is not in cells',
    ],
    [
      'the learn router without seed 000 routing',
      (f) => Object.assign(f, { routers: { learn: true } }),
      'routers.learn: the learn router needs "seed000Routing": true (its learn endpoint and 421)',
    ],
    [
      'two concurrency limits for one RPC',
      (f) =>
        Object.assign(f.cells[1] ?? {}, {
          gitaly: { concurrency: [{ ...UPLOAD_PACK_LIMIT }, { ...UPLOAD_PACK_LIMIT, maxPerRepo: 2 }] },
        }),
      'cells[1].gitaly.concurrency[1].rpc: "/gitaly.SSHService/SSHUploadPackWithSidechannel" is already used by cells[1].gitaly.concurrency[0]',
    ],
    [
      'no router at all',
      (f) => Object.assign(f, { routers: { topology: false } }),
      'routers: at least one router must run (stack.json names it as "router")',
    ],
  ];
  for (const [what, edit, message] of cases) {
    it(`reports ${what}`, () => {
      expect(problems(edit)).toEqual([message]);
    });
  }

  it('lists every problem of a file at once, in file order', () => {
    const got = problems((f) => {
      f.cells.push({ name: 'alpha', region: 'x', legacy: true });
      f.projects?.push({ path: 'acme/site' });
      f.members?.push({ user: 'nobody', namespace: 'team', role: 'guest' });
    });
    expect(got).toEqual([
      'cells[3].name: "alpha" is already used by cells[0]',
      'cells[3].legacy: a second legacy cell (cells[0] is legacy already)',
      'projects[2].path: namespace "acme" is not in namespaces (nor a user\'s)',
      'members[1].user: user "nobody" is not in users',
    ]);
  });

  it('accepts a bare repository relative to the file', () => {
    mkdirSync(join(dir, 'repos'), { recursive: true });
    execFileSync('git', ['init', '--quiet', '--bare', join(dir, 'repos', 'lib.git')]);
    expect(
      problems((f) => f.projects?.push({ path: 'team/lib', repository: { bare: 'repos/lib.git' } })),
    ).toEqual([]);
  });
});

describe('topology file: loading', () => {
  it('throws every problem of a file and names the file', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ ...world(), cells: [{ name: 'a', region: 'r' }] }));
    expect(() => loadTopologyFile(file)).toThrow(TopologyFileError);
    try {
      loadTopologyFile(file);
    } catch (err) {
      expect((err as TopologyFileError).file).toBe(file);
      expect((err as TopologyFileError).problems).toContain('cells: no cell is legacy (exactly one must be)');
    }
  });

  it('reports a file that is not JSON', () => {
    const file = join(dir, 'not.json');
    writeFileSync(file, '{ cells: ');
    expect(() => loadTopologyFile(file)).toThrow(/root: not JSON/);
  });
});

describe('topology file: resolution and conversion', () => {
  const w = resolveTopologyFile(world(), join(dir, 'w.json'), dir);

  it('assigns ids in file order, keeps given cell ids, fills every default', () => {
    expect(w.cells.map((c) => [c.name, c.id, c.sessionPrefix])).toEqual([
      ['alpha', 1, 'cell-1'],
      ['beta', 2, 'cell-2'],
      ['gamma', 7, 'cell-7'],
    ]);
    expect(w.namespaces.map((n) => [n.path, n.id, n.kind])).toEqual([
      ['team', 1, 'group'],
      ['zoe', 10, 'user'],
      ['yann', 11, 'user'],
    ]);
    expect(w.projects[1]).toEqual({
      id: 2,
      namespace: 'zoe',
      path: 'notes',
      visibility: 'private',
      defaultBranch: 'trunk',
      protectedBranches: [{ name: 'trunk', pushAccessLevel: 40, allowForcePush: false }],
      repository: { seed: 'empty' },
    });
    expect(w.users[0]).toMatchObject({ id: 1, name: 'zoe', admin: false, password: 'zoe-password' });
    expect(w.members).toEqual([{ user: 'zoe', namespace: 'team', accessLevel: 30 }]);
    expect(w.fixedRoutes.map((r) => r.cell)).toEqual(['alpha', 'alpha', 'alpha', 'alpha', 'alpha']);
    expect(w.routers).toEqual({
      learn: false,
      topology: true,
      tunnelProfile: 'gitlab-shell-14.57.6',
      shellJwtTtlSeconds: 60,
    });
    expect(w.seed000Routing).toBe(false);
  });

  it('gives the mock cell a topology it accepts, GitLab-faithful unless seed000Routing', () => {
    const t = worldTopology(w, stackPorts(0), stackPaths(dir), { zoe: 'k1', yann: 'k2' }, LOCAL_NET);
    expect(t.seed000Routing).toBeUndefined();
    expect(t.cells.map((c) => c.url)).toEqual([
      'http://127.0.0.1:4001',
      'http://127.0.0.1:4002',
      'http://127.0.0.1:4007',
    ]);
    expect(t.keys).toEqual([
      { id: 1, user: 'zoe', title: 'zoe@demo', key: 'k1' },
      { id: 2, user: 'yann', title: 'yann@demo', key: 'k2' },
    ]);
  });

  it('reads the demo as the seed: four cells, its ids and names, both routers and Geo on cell_us0', () => {
    const demo = demoWorld();
    expect(demo.file).toBe(DEMO_TOPOLOGY_FILE);
    expect(demo.cells.map((c) => `${c.id}:${c.name}${c.legacy ? '*' : ''}`)).toEqual([
      '1:cell_us0*',
      '2:cell_us1',
      '3:cell_eu0',
      '4:cell_eu1',
    ]);
    expect(demo.projects.map((p) => `${p.id}:${p.namespace}/${p.path}`)).toEqual([
      '1:gitlab-org/gitlab-test',
      '2:gitlab-org/gitlab',
      '3:my-company/my-project',
      '4:my-company/my-other-project',
      '5:not-my-company/not-my-project',
      '6:john.doe/notes',
      '7:acme.corp/www.site',
    ]);
    expect(demo.users.map((u) => `${u.id}:${u.username}`)).toEqual([
      '1:root',
      '2:alice',
      '3:bob',
      '4:carol',
      '5:dave',
      '6:john.doe',
    ]);
    expect(demo.namespaces.map((n) => n.id)).toEqual([1, 2, 3, 4, 10, 11, 12, 13, 14, 15]);
    expect(demo.routers).toEqual({
      learn: true,
      topology: true,
      tunnelProfile: 'gitlab-shell-14.57.6',
      shellJwtTtlSeconds: 60,
    });
    expect(demo.seed000Routing).toBe(true);
    expect(demo.geo).toEqual(['cell_us0']);
  });
});
