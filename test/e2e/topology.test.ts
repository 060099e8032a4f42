import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRoutableToken } from '../../lib/routable-token.js';
import { type SpawnedRouter, spawnRouter } from '../../router/test-support/spawned-router.js';
import { demoWorld } from '../../stack/topology-file-load.js';
import { startTopology } from '../../topology-service/test-support/harness.js';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';
import {
  HttpClient,
  SHELL_HEADER,
  shellJwt,
  topologyCalls,
  tunnelledCells,
  WORKHORSE_HEADER,
  workhorseJwt,
} from '../helpers/topology.js';

/**
 * The stack's second router (`routing: "topology"`) as gitlab-shell in Cells mode and the HTTP
 * Router: real git and ssh through it, the cells' claims in the real Topology Service process,
 * the bridges' shell endpoints on 127.0.0.x and one shared port.
 */
let stack: RunningStack;
let dir: string;
const spawned: SpawnedRouter[] = [];
const ERRORS = 'gitlab_cells_router_topology_errors_total';

/** Projects of three cells that root (admin) may push to. */
const PROJECTS = [
  ['gitlab-org/gitlab-test', 'cell_us0'],
  ['acme.corp/www.site', 'cell_us1'],
  ['my-company/my-project', 'cell_eu0'],
] as const;

/** The topology router of the demo stack (which always starts it). */
const routerTopology = () => {
  const r = stack.json.routerTopology;
  if (!r) throw new Error('stack.json names no topology router');
  return r;
};
const topoUrl = (project: string) => `ssh://git@${routerTopology().ssh}/${project}.git`;

beforeAll(async () => {
  stack = await startStack();
  dir = mkdtempSync(join(tmpdir(), 'topology-e2e-'));
});

afterAll(async () => {
  await Promise.all(spawned.map((r) => r.stop()));
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('stack.json and the gitlab-shell layout', () => {
  it('names the Topology Service, the topology router and each cell shell endpoint', () => {
    expect(stack.json.topologyService.grpc).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(routerTopology().http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ports = new Set(stack.json.cells.map((c) => new URL(c.shellEndpoint).port));
    expect(ports.size).toBe(1);
    expect(stack.json.cells.map((c) => new URL(c.shellEndpoint).hostname)).toEqual(
      demoWorld().cells.map((c) => `127.0.0.${c.id + 1}`),
    );
  });
});

describe('git through the topology router', () => {
  it('clones, pushes and archives projects of three cells, each tunnelled to its own cell', async () => {
    const env = stack.gitEnv('root');
    for (const [project, cell] of PROJECTS) {
      const work = join(dir, project.replace('/', '_'));
      await runOk('git', ['clone', '-q', topoUrl(project), work], { env });
      await runOk(
        'git',
        [
          '-C',
          work,
          '-c',
          'user.name=Root',
          '-c',
          'user.email=root@example.com',
          'commit',
          '-q',
          '--allow-empty',
          '-m',
          'topology',
        ],
        { env },
      );
      await runOk('git', ['-C', work, 'push', '-q', 'origin', 'HEAD:refs/heads/topology'], { env });
      const local = (await runOk('git', ['-C', work, 'rev-parse', 'HEAD'], { env })).trim();
      const repo = stack.project(project).repository;
      const remote = await runOk('git', ['--git-dir', repo, 'rev-parse', 'refs/heads/topology'], { env });
      expect(remote.trim()).toBe(local);
      const tar = join(dir, `${project.replace('/', '_')}.tar`);
      await runOk('git', ['archive', '--remote', topoUrl(project), '-o', tar, 'topology'], { env });
      expect(tunnelledCells(stack, project)).toEqual([cell, cell, cell]);
    }
    const classifies = topologyCalls(stack, 'Classify');
    expect(classifies.some((c) => c.by === 'claim' && String(c.key).startsWith('ssh_key_fingerprint'))).toBe(
      true,
    );
    expect(classifies.some((c) => c.by === 'claim' && String(c.key).startsWith('route'))).toBe(true);
  }, 180_000);
});

describe('HTTP front classify rules through the Topology Service', () => {
  it('routes a PAT, a runner token and a job token by the cell the service names', async () => {
    const front = () => new HttpClient(routerTopology().http);
    const dave = front();
    await dave.signIn('dave');
    const before = topologyCalls(stack, 'POST /v1/classify').length;
    const pat = await dave.request('POST', '/api/v4/user/personal_access_tokens', {
      json: { name: 'topology', scopes: ['api'] },
    });
    expect([pat.status, pat.cell]).toEqual([201, 'cell_eu0']);
    const token = (JSON.parse(pat.body) as { token: string }).token;
    expect(decodeRoutableToken(token).fields.c).toBe('3');
    const me = await front().request('GET', '/api/v4/user', { headers: { 'private-token': token } });
    expect([me.status, me.cell]).toEqual([200, 'cell_eu0']);

    const runner = await dave.request('POST', '/api/v4/user/runners', {
      json: { runner_type: 'project_type', project_id: 3 },
    });
    expect([runner.status, runner.cell]).toEqual([201, 'cell_eu0']);
    const glrt = (JSON.parse(runner.body) as { token: string }).token;
    for (const header of ['runner-token', 'job-token']) {
      const verified = await front().request('POST', '/api/v4/runners/verify', {
        headers: { [header]: glrt },
        json: { token: glrt },
      });
      expect([header, verified.status, verified.cell]).toEqual([header, 200, 'cell_eu0']);
    }
    const rest = topologyCalls(stack, 'POST /v1/classify').slice(before);
    expect(rest.filter((c) => c.by === 'CELL_ID' && String(c.cell_id) === '3').length).toBeGreaterThanOrEqual(
      3,
    );
    expect(rest.some((c) => c.by === 'SESSION_PREFIX')).toBe(true);
  }, 60_000);
});

describe("the mock cell's pre-authorization checks the shell JWT itself", () => {
  it('answers 404 Not found for a missing or forged shell JWT', async () => {
    const rails = stack.json.cells.find((c) => c.name === 'cell_eu0')?.rails as string;
    const forged = `${(await shellJwt(stack, 'user-2')).slice(0, -4)}AAAA`;
    for (const shell of [undefined, forged]) {
      for (const route of ['ssh-upload-pack', 'ssh-receive-pack']) {
        const res = await fetch(`${rails}/my-company/my-project.git/${route}`, {
          method: 'POST',
          headers: {
            [WORKHORSE_HEADER]: await workhorseJwt(stack),
            ...(shell ? { [SHELL_HEADER]: shell } : {}),
          },
        });
        expect([route, res.status, await res.text()]).toEqual([route, 404, 'Not found']);
      }
    }
    const ok = await fetch(`${rails}/my-company/my-project.git/ssh-upload-pack`, {
      method: 'POST',
      headers: {
        [WORKHORSE_HEADER]: await workhorseJwt(stack),
        [SHELL_HEADER]: await shellJwt(stack, 'user-2'),
      },
    });
    expect(ok.status).toBe(200);
  });
});

describe('an organization move, followed by both routers', () => {
  it('re-claims the routes: the next clones through either router come from the new cell', async () => {
    const env = stack.gitEnv('alice');
    await runOk('git', ['clone', '-q', stack.url('my-company/my-project'), join(dir, 'learn-before')], {
      env,
    });
    const rails = stack.json.cells.find((c) => c.name === 'cell_eu0')?.rails as string;
    const moved = await fetch(`${rails}/api/v4/internal/admin/organizations/my-organization/move`, {
      method: 'POST',
      headers: { [SHELL_HEADER]: await shellJwt(stack), 'content-type': 'application/json' },
      body: JSON.stringify({ cell: 'cell_eu1' }),
    });
    expect(moved.status).toBe(200);
    await runOk('git', ['clone', '-q', topoUrl('my-company/my-project'), join(dir, 'topo-after')], { env });
    expect(tunnelledCells(stack, 'my-company/my-project').at(-1)).toBe('cell_eu1');
    await runOk('git', ['clone', '-q', stack.url('my-company/my-project'), join(dir, 'learn-after')], {
      env,
    });
    const head = (d: string) => runOk('git', ['-C', join(dir, d), 'rev-parse', 'HEAD'], { env });
    expect(await head('topo-after')).toBe(await head('learn-after'));
  }, 120_000);
});

describe('Topology Service stopped', () => {
  it('sends everything to the legacy cell, counts the errors and does not hang', async () => {
    const ts = await startTopology({ cells: [{ id: 1, name: 'cell_us0', address: '127.0.0.2' }] });
    await ts.stop();
    const shellPort = Number(new URL(stack.json.cells[0]?.shellEndpoint as string).port);
    const router = await spawnRouter({
      dir,
      name: 'router-topology-down',
      shellSecretFile: stack.json.secrets.shell,
      region: 'us',
      cells: stack.json.cells.map((c) => ({
        id: c.id,
        name: c.name,
        legacy: c.legacy,
        region: demoWorld().cells.find((d) => d.name === c.name)?.region ?? 'us',
        url: c.shellEndpoint,
      })),
      settings: {
        routing: 'topology',
        topologyServiceAddress: ts.grpc,
        topologyServiceUrl: ts.http,
        cellEndpointPort: shellPort,
        topologyTimeoutMs: 1000,
      },
    });
    spawned.push(router);
    const env = { ...stack.gitEnv('root') };
    env.GIT_SSH_COMMAND = (env.GIT_SSH_COMMAND as string).replace(stack.json.knownHosts, router.knownHosts);
    const url = (p: string) => `ssh://git@127.0.0.1:${router.sshPort}/${p}.git`;
    const started = Date.now();
    await runOk('git', ['clone', '-q', url('gitlab-org/gitlab-test'), join(dir, 'down-legacy')], { env });
    const other = await run('git', ['clone', '-q', url('acme.corp/www.site'), join(dir, 'down-other')], {
      env,
    });
    expect(other.code).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(60_000);
    // A session of cell 3: the SESSION_PREFIX classify fails, the legacy cell answers.
    const me = await new HttpClient(router.http).request('GET', '/api/v4/user', {
      headers: { cookie: `_gitlab_session=cell-3-${'0'.repeat(32)}` },
    });
    expect(me.cell).toBe('cell_us0');
    expect((await router.counters())[ERRORS]).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
