import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StackJson } from '../../lib/contracts/stack.js';
import type { TopologyFile } from '../../lib/contracts/topology-file.js';
import { EXIT_ADDRESS_IN_USE } from '../../stack/layout.js';
import { run, runOk } from '../helpers/run.js';
import { killGroup, readStackJson, type StackProcess, spawnStack } from '../helpers/stack.js';

/**
 * A world of the user's own: a three-cell topology file unlike the demo (its names, regions, a
 * bare repository of the user's, a user whose public key the file gives), started with
 * `--topology … --free-ports --data-dir …`, cloned from through the topology router; and files and
 * flags the stack refuses with exit 78 and every problem listed.
 */

const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LANG: 'C' };
const dir = mkdtempSync(join(tmpdir(), 'stack-world-'));
const dataDir = join(dir, 'data');
const topologyFile = join(dir, 'world', 'orchard.json');
let proc: StackProcess | undefined;
let json: StackJson;

const PROJECTS = [
  ['apples/pressing', 'north_a'],
  ['pears/imported', 'south_b'],
  ['plums/drying', 'east_c'],
] as const;

function orchard(): TopologyFile {
  return {
    version: 1,
    cells: [
      { name: 'north_a', region: 'north', legacy: true },
      { name: 'south_b', region: 'south' },
      { name: 'east_c', region: 'east' },
    ],
    organizations: [
      { path: 'north-farm', cell: 'north_a' },
      { path: 'south-farm', cell: 'south_b' },
      { path: 'east-farm', cell: 'east_c' },
    ],
    namespaces: [
      { path: 'apples', kind: 'group', organization: 'north-farm' },
      { path: 'pears', kind: 'group', organization: 'south-farm' },
      { path: 'plums', kind: 'group', organization: 'east-farm' },
    ],
    projects: [
      { path: 'apples/pressing' },
      { path: 'pears/imported', repository: { bare: '../source.git' } },
      { path: 'plums/drying', visibility: 'internal' },
    ],
    users: [
      { username: 'wren', defaultOrganization: 'south-farm' },
      {
        username: 'finch',
        defaultOrganization: 'east-farm',
        publicKey:
          'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB finch@elsewhere',
      },
    ],
    members: [
      { user: 'wren', namespace: 'apples', role: 'developer' },
      { user: 'wren', namespace: 'pears', role: 'reporter' },
      { user: 'wren', project: 'plums/drying', role: 'maintainer' },
    ],
  };
}

/** Starts the world; a start that lost a port race (exit 75) is retried, as callers are told to. */
async function startWorld(): Promise<StackJson> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    proc = spawnStack({
      dataDir,
      args: ['--topology', topologyFile, '--free-ports', '--data-dir', dataDir],
    });
    const stackJson = join(dataDir, 'stack.json');
    const deadline = Date.now() + 120_000;
    let readyJson: StackJson | undefined;
    while (readyJson === undefined && proc.child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        readyJson = readStackJson(stackJson);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    if (readyJson) return readyJson;
    const code = proc.child.exitCode;
    killGroup(proc.pgid);
    if (code !== EXIT_ADDRESS_IN_USE)
      throw new Error(`world did not start (${code}):\n${proc.stdout()}${proc.stderr()}`);
  }
  throw new Error('world lost the port race three times');
}

beforeAll(async () => {
  mkdirSync(join(dir, 'world'), { recursive: true });
  const source = join(dir, 'source.git');
  const work = join(dir, 'source-work');
  await runOk('git', ['init', '--quiet', '--initial-branch=main', work], {
    env: { ...process.env, ...GIT_ENV },
  });
  writeFileSync(join(work, 'pears.txt'), 'conference\n');
  const git = (args: string[]) =>
    runOk('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      cwd: work,
      env: { ...process.env, ...GIT_ENV },
    });
  await git(['add', '.']);
  await git(['commit', '--quiet', '-m', 'pears']);
  await runOk('git', ['clone', '--quiet', '--bare', work, source], { env: { ...process.env, ...GIT_ENV } });
  writeFileSync(topologyFile, JSON.stringify(orchard(), null, 2));
  json = await startWorld();
}, 200_000);

afterAll(async () => {
  if (proc) {
    if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
    await Promise.race([proc.closed, new Promise((r) => setTimeout(r, 20_000))]);
    killGroup(proc.pgid);
  }
  await rm(dir, { recursive: true, force: true });
}, 40_000);

describe('a world from a topology file, on free ports', () => {
  it('writes a stack.json of the schema naming the file, its cells, users and projects', () => {
    expect(json.version).toBe(1);
    expect(json.topologyFile).toBe(topologyFile);
    expect(json.cells.map((c) => [c.id, c.name, c.legacy])).toEqual([
      [1, 'north_a', true],
      [2, 'south_b', false],
      [3, 'east_c', false],
    ]);
    // No learn router (no seed000Routing): stack.json's router is the topology router.
    expect(json.routerTopology).toBeDefined();
    expect(json.router).toEqual(json.routerTopology);
    expect(Object.keys(json.pids).sort()).toEqual(
      [
        'bridge-east_c',
        'bridge-north_a',
        'bridge-south_b',
        'gitaly-east_c',
        'gitaly-north_a',
        'gitaly-south_b',
        'mock-cell',
        'router-topology',
        'topology-service',
      ].sort(),
    );
    expect(json.projects.map((p) => [p.path, p.cell])).toEqual(PROJECTS.map(([p, c]) => [p, c]));
    expect(json.geo).toEqual([]);
    const finch = json.users.find((u) => u.username === 'finch');
    expect(finch?.privateKey).toBeUndefined();
    expect(readFileSync(finch?.publicKey ?? '', 'utf8')).toMatch(/finch@elsewhere/);
    // free ports: none of today's defaults
    expect(json.router.ssh).not.toBe('127.0.0.1:2223');
  });

  it.each(PROJECTS)(
    'wren clones %s (cell %s) through the topology router with git and OpenSSH',
    async (path) => {
      const wren = json.users.find((u) => u.username === 'wren');
      const target = join(dir, 'clones', path.replace('/', '-'));
      const env = {
        PATH: process.env.PATH,
        HOME: dir,
        ...GIT_ENV,
        GIT_TERMINAL_PROMPT: '0',
        GIT_SSH_COMMAND: `ssh -F /dev/null -i ${wren?.privateKey} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${json.knownHosts}`,
      };
      const r = await run('git', ['clone', `ssh://git@${json.routerTopology?.ssh}/${path}.git`, target], {
        env,
        timeoutMs: 60_000,
      });
      expect(r.stderr).not.toMatch(/fatal/);
      expect(r.code).toBe(0);
      const file = path === 'pears/imported' ? 'pears.txt' : 'README.md';
      expect(readFileSync(join(target, file), 'utf8')).toContain(
        path === 'pears/imported' ? 'conference' : path,
      );
    },
    90_000,
  );
});

describe('a start the stack refuses (exit 78, nothing started)', () => {
  async function refused(args: string[]): Promise<string> {
    const p = spawnStack({ dataDir: join(dir, 'refused'), args });
    const code = await p.closed;
    killGroup(p.pgid);
    expect(code, p.stderr()).toBe(78);
    return p.stderr();
  }

  it('lists every problem of a bad topology file, one line each', async () => {
    const bad = orchard();
    bad.cells.push({ name: 'south_b', region: 'west', legacy: true });
    bad.projects?.push(
      { path: 'figs/dried' },
      { path: 'pears/missing', repository: { bare: 'no-such.git' } },
    );
    bad.members?.push({ user: 'robin', namespace: 'apples', role: 'guest' });
    bad.geo = [{ cell: 'west_d' }];
    const file = join(dir, 'world', 'bad.json');
    writeFileSync(file, JSON.stringify(bad));
    const stderr = await refused(['--topology', file, '--free-ports']);
    expect(stderr.split('\n').filter((l) => l !== '')).toEqual([
      `invalid topology file ${file}:`,
      'cells[3].name: "south_b" is already used by cells[1]',
      'cells[3].legacy: a second legacy cell (cells[0] is legacy already)',
      'projects[3].path: namespace "figs" is not in namespaces (nor a user\'s)',
      `projects[4].repository.bare: "${join(dir, 'world', 'no-such.git')}" is not a bare repository`,
      'members[3].user: user "robin" is not in users',
      'geo[0].cell: cell "west_d" is not in cells',
    ]);
  }, 30_000);

  it('names a structural problem by its path in the file', async () => {
    const file = join(dir, 'world', 'shape.json');
    writeFileSync(file, JSON.stringify({ ...orchard(), version: 3, routers: { lean: true } }));
    const stderr = await refused(['--topology', file]);
    expect(stderr).toContain('version: must be 1');
    expect(stderr).toContain('routers.lean: is not a known field');
  }, 30_000);

  it.each([
    [['--port-offset', '100', '--free-ports'], /--port-offset and --free-ports exclude each other/],
    [['--geo', 'maybe'], /geo \(STACK_GEO\) must be one of/],
    [['--colour'], /Unknown option '--colour'/],
  ])(
    'refuses the flags %j',
    async (args, message) => {
      expect(await refused(args)).toMatch(message);
    },
    30_000,
  );
});
