import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TopologyInvalid } from './errors.js';
import { demoModel, demoTopology, keyBlob, sshKeyLine, tempDir } from './test-support/fixtures.js';
import { loadTopologyFile, TopologyModel } from './topology.js';
import { AccessLevel, type Topology } from './topology-types.js';

/** The validation message of a topology edited by `edit`, or undefined when it is valid. */
function problemsOf(edit: (t: Topology) => void): string | undefined {
  const t = demoTopology('/srv/storage');
  edit(t);
  try {
    TopologyModel.fromJson(t);
    return undefined;
  } catch (err) {
    if (!TopologyInvalid.is(err)) throw err;
    return err.message;
  }
}

describe('TopologyModel lookups', () => {
  const model = demoModel('/srv/storage');

  it('finds projects by full path (case-insensitively, as GitLab) and by id', () => {
    const p = model.projectByPath('My-Company/My-Project');
    expect(p?.id).toBe(3);
    expect(model.projectById(5)?.path).toBe('not-my-project');
    expect(model.projectByPath('my-company/nope')).toBeUndefined();
    expect(model.fullPath(model.projectById(3)!)).toBe('my-company/my-project');
  });

  it('finds users by id and username, keys by id and by base64 blob', () => {
    expect(model.userByUsername('ALICE')?.id).toBe(2);
    expect(model.userById(1)?.admin).toBe(true);
    expect(model.keyById(4)?.user).toBe('carol');
    const key = model.keyByBlob(keyBlob(sshKeyLine(3)));
    expect(key?.id).toBe(3);
    expect(model.userOfKey(key!).username).toBe('bob');
    expect(model.keyByBlob(keyBlob(sshKeyLine(99)))).toBeUndefined();
  });

  it('resolves access levels from group and project memberships (the higher wins)', () => {
    const alice = model.userByUsername('alice')!;
    const dave = model.userByUsername('dave')!;
    const myProject = model.projectById(3)!;
    const otherProject = model.projectById(4)!;
    expect(model.namespaceAccessLevel(alice, 'my-company')).toBe(0);
    expect(model.projectAccessLevel(alice, myProject)).toBe(AccessLevel.developer);
    expect(model.projectAccessLevel(alice, otherProject)).toBe(0);
    expect(model.namespaceAccessLevel(dave, 'MY-COMPANY')).toBe(AccessLevel.maintainer);
    expect(model.projectAccessLevel(dave, otherProject)).toBe(AccessLevel.maintainer);
  });

  it('resolves owning cells via namespace → organization → cell', () => {
    expect(model.cellOfProject(model.projectById(3)!).name).toBe('cell_eu0');
    expect(model.cellOfProject(model.projectById(5)!).name).toBe('cell_us1');
    expect(model.cellOfNamespace(model.namespace('gitlab-org')!).name).toBe('cell_us0');
    expect(model.cellOfOrganization(model.organization('my-organization')!).name).toBe('cell_eu0');
    expect(model.legacyCell().name).toBe('cell_us0');
  });

  it('places repositories at <owning cell storage>/<hashed path>', () => {
    expect(model.repositoryDir(model.projectById(3)!)).toMatch(
      /^\/srv\/storage\/cell_eu0\/@hashed\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git$/,
    );
  });

  it('moves an organization and everything in it to another cell', () => {
    const m = demoModel('/srv/storage');
    m.moveOrganization('my-organization', 'cell_eu1');
    expect(m.cellOfProject(m.projectById(3)!).name).toBe('cell_eu1');
    expect(m.repositoryDir(m.projectById(3)!)).toMatch(/^\/srv\/storage\/cell_eu1\//);
    expect(() => m.moveOrganization('nope', 'cell_eu1')).toThrow(/no organization with path "nope"/);
    expect(() => m.moveOrganization('my-organization', 'cell_xx')).toThrow(/no cell named "cell_xx"/);
  });

  it('refuses a move to a cell without the storage the projects use', () => {
    const m = demoModel('/srv/storage', (t) => {
      (t.cells[3] as Topology['cells'][number]).gitaly.storages = { other: '/srv/other' };
    });
    expect(() => m.moveOrganization('my-organization', 'cell_eu1')).toThrow(/has no storage "default"/);
    expect(m.cellOfProject(m.projectById(3)!).name).toBe('cell_eu0');
  });

  it('keeps its own copy of the input', () => {
    const t = demoTopology('/srv/storage');
    const m = TopologyModel.fromJson(t);
    (t.organizations[2] as Topology['organizations'][number]).cell = 'cell_us0';
    expect(m.cellOfProject(m.projectById(3)!).name).toBe('cell_eu0');
  });
});

describe('topology validation', () => {
  it('accepts the demo topology', () => {
    expect(problemsOf(() => undefined)).toBeUndefined();
  });

  it('names the entry and field of a wrongly typed value', () => {
    expect(
      problemsOf((t) => {
        (t.projects[1] as unknown as Record<string, unknown>).id = 'two';
      }),
    ).toBe(
      'invalid topology (1 problem):\n  - projects[1] "gitlab-org/gitlab": field "id" must be an integer, got string',
    );
    expect(
      problemsOf((t) => {
        (t as unknown as Record<string, unknown>).users = {};
      }),
    ).toContain('users: must be an array, got object');
  });

  it('reports unknown references with the entry and the field', () => {
    const msg = problemsOf((t) => {
      (t.projects[2] as Topology['projects'][number]).namespace = 'ghost-company';
      (t.organizations[0] as Topology['organizations'][number]).cell = 'cell_mars';
      t.members.push({ user: 'zoe', namespace: 'gitlab-org', accessLevel: 30 });
      t.keys.push({ id: 50, user: 'alice', title: 'bad', key: 'ssh-ed25519 not-base64!' });
    });
    expect(msg).toContain(
      'projects[2] "ghost-company/my-project": field "namespace": no namespace with path "ghost-company"',
    );
    expect(msg).toContain(
      'organizations[0] "gitlab-com-public": field "cell": no cell named "cell_mars" (cells: cell_us0,',
    );
    // The memberships of the moved project now point nowhere: reported too.
    expect(msg).toContain('members[2] "alice": field "project": no project "my-company/my-project"');
    expect(msg).toContain('members[5] "zoe": field "user": no user "zoe"');
    expect(msg).toContain('keys[6] "alice": field "key" must be an OpenSSH public key line');
    expect(msg).toMatch(/^invalid topology \(6 problems\)/);
  });

  it('reports duplicates, naming the earlier entry', () => {
    const msg = problemsOf((t) => {
      (t.users[2] as Topology['users'][number]).username = 'Alice';
      (t.projects[4] as Topology['projects'][number]).id = 1;
      (t.keys[1] as Topology['keys'][number]).key = sshKeyLine(1, 'copy');
    });
    expect(msg).toContain('users[2] "Alice": username "Alice" is already used by users[1]');
    expect(msg).toContain(
      'projects[4] "not-my-company/not-my-project": id "1" is already used by projects[0]',
    );
    expect(msg).toContain('keys[1] "alice": key');
  });

  it('requires exactly one legacy cell', () => {
    expect(
      problemsOf((t) => {
        for (const c of t.cells) c.legacy = true;
      }),
    ).toContain('exactly one cell must have "legacy": true, found 4');
    expect(
      problemsOf((t) => {
        for (const c of t.cells) delete c.legacy;
      }),
    ).toContain('found 0');
  });

  it('requires a membership in exactly one of a namespace or a project', () => {
    const msg = problemsOf((t) => {
      t.members.push({
        user: 'bob',
        namespace: 'my-company',
        project: 'my-company/my-project',
        accessLevel: 30,
      });
      t.members.push({ user: 'bob', project: 'my-company/ghost', accessLevel: 30 });
      t.members.push({ user: 'carol', namespace: 'gitlab-org', accessLevel: 35 });
    });
    expect(msg).toContain(
      'members[5] "bob": exactly one of the fields "namespace" (group membership) and "project"',
    );
    expect(msg).toContain('members[6] "bob": field "project": no project "my-company/ghost"');
    expect(msg).toContain(
      'members[7] "carol": field "accessLevel" must be one of 10, 20, 30, 40, 50, got 35',
    );
  });

  it("checks that a project's storage exists in its owning cell", () => {
    expect(
      problemsOf((t) => {
        (t.projects[3] as Topology['projects'][number]).storage = 'fast';
      }),
    ).toContain(
      'projects[3] "my-company/my-other-project": field "storage": cell "cell_eu0" that owns the project has no storage "fast"',
    );
  });

  it('checks paths, URLs, visibility, push levels and fixed routes', () => {
    const msg = problemsOf((t) => {
      t.externalUrl = 'ftp://x';
      (t.namespaces[0] as Topology['namespaces'][number]).path = 'bad path';
      (t.projects[0] as Topology['projects'][number]).visibility = 'secret' as 'public';
      (t.projects[0] as Topology['projects'][number]).protectedBranches.push({
        name: 'x',
        pushAccessLevel: 33,
        allowForcePush: false,
      });
      t.fixedRoutes.push({ path: 'admin/', cell: 'cell_us0' });
      (t.cells[1] as Topology['cells'][number]).gitaly.storages.default = 'relative/dir';
    });
    expect(msg).toContain('externalUrl: must be an http(s) URL');
    expect(msg).toContain('namespaces[0] "bad path": field "path" is not a valid path segment');
    expect(msg).toContain('field "visibility" must be private, internal or public, got "secret"');
    expect(msg).toContain(
      'protectedBranches[1]: field "pushAccessLevel" must be one of 0, 10, 20, 30, 40, 50, got 33',
    );
    expect(msg).toContain('fixedRoutes[5] "admin/": field "path" must start with "/"');
    expect(msg).toContain(
      'cells[1] "cell_us1": storage "default" must be an absolute folder path, got "relative/dir"',
    );
  });
});

describe('loadTopologyFile', () => {
  let cleanup: (() => void) | undefined;
  afterEach(() => cleanup?.());

  it('loads a valid file and rejects unreadable or non-JSON files with the path in the message', () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    const good = join(tmp.dir, 'topology.json');
    writeFileSync(good, JSON.stringify(demoTopology(tmp.dir)));
    expect(loadTopologyFile(good).projectById(3)?.path).toBe('my-project');
    const bad = join(tmp.dir, 'bad.json');
    writeFileSync(bad, '{ nope');
    expect(() => loadTopologyFile(bad)).toThrow(`topology file ${bad} is not valid JSON`);
    expect(() => loadTopologyFile(join(tmp.dir, 'missing.json'))).toThrow(
      /cannot read topology file .*missing\.json/,
    );
  });
});
