import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployToken, jobToken } from '../../mock-cell/git-http/derived-tokens.js';
import { TopologyModel } from '../../mock-cell/topology.js';
import type { Topology } from '../../mock-cell/topology-types.js';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * Git over HTTP through the demo stack: the router's HTTP front (learned routes) → the owning
 * cell's bridge (Workhorse's git routes) → mock Gitaly's SmartHTTPService, pre-authorized by the
 * mock cell with Rails' authentication. Real git, real processes.
 */
let stack: RunningStack;
let model: TopologyModel;
let work: string;

beforeAll(async () => {
  stack = await startStack();
  model = TopologyModel.fromJson(
    JSON.parse(readFileSync(join(stack.dataDir, 'topology.json'), 'utf8')) as Topology,
  );
  work = mkdtempSync(join(stack.dataDir, 'git-http-'));
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const ALICE = 'alice:alice-password';
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Alice',
  GIT_AUTHOR_EMAIL: 'alice@example.com',
  GIT_COMMITTER_NAME: 'Alice',
  GIT_COMMITTER_EMAIL: 'alice@example.com',
};

function httpUrl(base: string, project: string, credentials?: string): string {
  const u = new URL(base);
  return `http://${credentials ? `${credentials}@` : ''}${u.host}/${project}.git`;
}
const viaRouter = (project: string, credentials?: string) =>
  httpUrl(stack.json.router.http, project, credentials);

function git(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return run('git', args, {
    cwd: opts.cwd ?? work,
    env: { ...stack.gitEnv('alice'), ...IDENTITY, GIT_TERMINAL_PROMPT: '0', ...opts.env },
    timeoutMs: 60_000,
  });
}

let n = 0;
const dest = () => join(work, `clone-${++n}`);

function project(path: string) {
  const p = model.projectByPath(path);
  if (!p) throw new Error(`no project ${path}`);
  return p;
}

describe('git over HTTP through the router', () => {
  it.each([
    ['gitlab-org/gitlab-test', 'cell_us0'],
    ['acme.corp/www.site', 'cell_us1'],
    ['john.doe/notes', 'cell_eu0'],
  ])('anonymous clone of the public %s (on %s)', async (path) => {
    const r = await git(['clone', viaRouter(path), dest()]);
    expect(r.stderr).not.toMatch(/fatal/);
    expect(r.code).toBe(0);
  });

  it('private project without credentials → Authentication failed after Rails’ 401', async () => {
    const r = await git(['clone', viaRouter('my-company/my-project'), dest()], {
      env: { GIT_ASKPASS: '/bin/true' },
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Authentication failed');
    const wrong = await git(['clone', viaRouter('my-company/my-project', 'alice:nope'), dest()]);
    expect(wrong.stderr).toContain('remote: HTTP Basic: Access denied.');
  });

  it.each(['0', '2'])('password clone and push with protocol v%s; protected main refused', async (v) => {
    const d = dest();
    const clone = await git([
      '-c',
      `protocol.version=${v}`,
      'clone',
      viaRouter('my-company/my-project', ALICE),
      d,
    ]);
    expect(clone.code).toBe(0);
    writeFileSync(join(d, `http-${v}.txt`), 'x\n');
    expect((await git(['add', '.'], { cwd: d })).code).toBe(0);
    expect((await git(['commit', '-qm', `http ${v}`], { cwd: d })).code).toBe(0);
    const push = await git(['-c', `protocol.version=${v}`, 'push', 'origin', `HEAD:refs/heads/http-${v}`], {
      cwd: d,
    });
    expect(push.stderr).not.toMatch(/fatal|rejected/);
    expect(push.code).toBe(0);
    const main = await git(['push', 'origin', 'HEAD:main'], { cwd: d });
    expect(main.code).not.toBe(0);
    expect(main.stderr).toContain('You are not allowed to push code to protected branches on this project.');
  });

  it('a PAT minted over SSH, a job token and a deploy token each clone the private project', async () => {
    const ssh = stack.sshCommand('alice').split(' ');
    const minted = await run(
      ssh[0] as string,
      [
        ...ssh.slice(1),
        '-p',
        String(stack.sshPort),
        'git@127.0.0.1',
        'personal_access_token http read_repository 1',
      ],
      { env: stack.gitEnv('alice'), timeoutMs: 30_000 },
    );
    const pat = /Token:\s+(\S+)/.exec(minted.stdout)?.[1];
    expect(pat, minted.stdout + minted.stderr).toBeDefined();
    const p = project('my-company/my-project');
    const alice = model.userByUsername('alice');
    if (!alice) throw new Error('no alice');
    const deploy = deployToken(p);
    // A path that does not decide (a fallback) goes where the PAT in Basic auth says: its cell.
    const whoServes = async (auth?: string) =>
      (
        await fetch(`${stack.json.router.http}/api/v4/user`, auth ? { headers: { authorization: auth } } : {})
      ).headers.get('x-gitlab-cell');
    expect(await whoServes(`Basic ${Buffer.from(`alice:${pat}`).toString('base64')}`)).toBe('cell_eu0');
    expect(await whoServes()).toBe('cell_us0');
    for (const credentials of [
      `alice:${pat}`,
      `gitlab-ci-token:${jobToken(p, alice)}`,
      `${encodeURIComponent(deploy.username)}:${deploy.token}`,
    ]) {
      const r = await git(['clone', viaRouter('my-company/my-project', credentials), dest()]);
      expect(r.stderr, credentials).not.toMatch(/fatal/);
      expect(r.code).toBe(0);
    }
  });

  it('straight into the owning cell’s bridge, and through the topology router', async () => {
    const eu0 = stack.json.cells.find((c) => c.name === 'cell_eu0');
    if (!eu0) throw new Error('no cell_eu0');
    const bridge = await git(['clone', httpUrl(eu0.bridge, 'my-company/my-project', ALICE), dest()]);
    expect(bridge.code).toBe(0);
    const topo = await git([
      'clone',
      httpUrl((stack.json.routerTopology ?? stack.json.router).http, 'my-company/my-project', ALICE),
      dest(),
    ]);
    expect(topo.stderr).not.toMatch(/fatal/);
    expect(topo.code).toBe(0);
  });
});
