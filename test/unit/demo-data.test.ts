import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureRepositories, repositoryDirs } from '../../stack/demo-data.js';
import { allStackPorts, findFreeOffset, LOCAL_NET, stackPaths, stackPorts } from '../../stack/layout.js';
import { worldTopology } from '../../stack/topology-file-convert.js';
import { demoWorld } from '../../stack/topology-file-load.js';
import { runOk } from '../helpers/run.js';

const dir = mkdtempSync(join(tmpdir(), 'demo-data-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const keys = Object.fromEntries(
  demoWorld().users.map((u) => [u.username, `ssh-ed25519 AAAA${u.username} ${u.username}`]),
);
const topology = worldTopology(demoWorld(), stackPorts(100), stackPaths(dir), keys, LOCAL_NET);

describe('demo topology', () => {
  it('places projects in the cells of the seed', () => {
    const dirs = repositoryDirs(topology);
    expect(dirs['my-company/my-project']).toContain('/cells/cell_eu0/repositories/@hashed/');
    expect(dirs['not-my-company/not-my-project']).toContain('/cells/cell_us1/');
    expect(dirs['gitlab-org/gitlab-test']).toContain('/cells/cell_us0/');
    expect(topology.cells.filter((c) => c.legacy).map((c) => c.name)).toEqual(['cell_us0']);
  });

  it('shifts every address by the port offset', () => {
    expect(topology.cells[0]?.url).toBe('http://127.0.0.1:4101');
    expect(topology.cells[3]?.gitaly.address).toBe('tcp://127.0.0.1:9104');
    expect(topology.externalUrl).toBe('http://127.0.0.1:8180');
  });

  it('lists every port a stack binds and finds an offset where all of them are free', async () => {
    const ports = allStackPorts(0);
    expect(ports).toHaveLength(30);
    expect(ports).toEqual(
      expect.arrayContaining([
        2222, 8080, 8081, 3001, 4004, 4104, 9001, 9004, 4443, 9095, 9096, 2223, 8082, 8083, 2224, 8084, 3011,
        4011, 9011,
      ]),
    );
    expect(new Set(ports).size).toBe(ports.length);
    const offset = await findFreeOffset(30_000, 10);
    expect(offset % 100).toBe(0);
    expect(offset).toBeGreaterThanOrEqual(30_000);
  });

  it('keeps alice out of my-other-project and carol a reporter', () => {
    const alice = topology.members.filter((m) => m.user === 'alice');
    expect(alice).toEqual([{ user: 'alice', project: 'my-company/my-project', accessLevel: 30 }]);
    expect(topology.members.find((m) => m.user === 'carol')?.accessLevel).toBe(20);
  });
});

describe('demo repositories', () => {
  it('have real history: branches, annotated and lightweight tags', async () => {
    const dirs = await ensureRepositories(topology, demoWorld());
    const repo = dirs['my-company/my-project'] as string;
    const refs = await runOk('git', ['--git-dir', repo, 'for-each-ref', '--format=%(refname) %(objecttype)']);
    expect(refs.trim().split('\n').sort()).toEqual([
      'refs/heads/develop commit',
      'refs/heads/feature/login commit',
      'refs/heads/main commit',
      'refs/tags/v1.0.0 tag',
      'refs/tags/v1.1.0 commit',
    ]);
    expect((await runOk('git', ['--git-dir', repo, 'rev-list', '--count', 'main'])).trim()).toBe('3');
    expect((await runOk('git', ['--git-dir', repo, 'symbolic-ref', 'HEAD'])).trim()).toBe('refs/heads/main');
    await runOk('git', ['--git-dir', repo, 'fsck', '--strict']);
  });
});
