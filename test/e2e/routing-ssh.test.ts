import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, SHELL_HEADER, signShellJwt } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { fetchCounters, type SpawnedRouter, spawnRouter } from '../../router/test-support/spawned-router.js';
import { demoWorld } from '../../stack/topology-file-load.js';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * Learned routes over SSH (and HTTP) through the real router processes, when an organization moves
 * to another cell (the mock cell's admin endpoint moves its repositories and its routes at once):
 * a router whose cache still names the old cell gets a 421 from it, drops the route, learns again
 * and serves the clone from the new cell; a router whose cached route expired just learns the new
 * cell. The stack's router (region us) keeps routes for the cells' 300 s; a second router (region
 * eu) started here keeps them for a few seconds only.
 */
let stack: RunningStack;
let dir: string;
let shortRouter: SpawnedRouter;

const SHORT_TTL_MS = 15_000;
const LEARNS = 'gitlab_cells_router_learn_requests_total';
const REDIRECTS = 'gitlab_cells_router_redirects_total';
const MOVED_PROJECT = 'my-company/my-project';

interface RouterUnderTest {
  name: string;
  http: string;
  url(project: string): string;
  env(user: string): NodeJS.ProcessEnv;
  counters(): Promise<Record<string, number>>;
}

let usRouter: RouterUnderTest;
let euShort: RouterUnderTest;

beforeAll(async () => {
  stack = await startStack();
  dir = mkdtempSync(join(tmpdir(), 'routing-ssh-'));
  shortRouter = await spawnRouter({
    dir,
    name: 'router-eu-short',
    shellSecretFile: stack.json.secrets.shell,
    region: 'eu',
    cells: stack.json.cells.map((c) => ({
      id: c.id,
      name: c.name,
      legacy: c.legacy,
      region: demoWorld().cells.find((d) => d.name === c.name)?.region ?? 'us',
      url: c.bridge,
    })),
    settings: { learnCacheMaxTtlMs: SHORT_TTL_MS },
  });
  usRouter = {
    name: 'stack router (us)',
    http: stack.json.router.http,
    url: (p) => stack.url(p),
    env: (u) => stack.gitEnv(u),
    counters: () => fetchCounters(stack.json.routerMetrics),
  };
  euShort = {
    name: 'short-TTL router (eu)',
    http: shortRouter.http,
    url: (p) => `ssh://git@127.0.0.1:${shortRouter.sshPort}/${p}.git`,
    env: (u) => {
      const user = stack.json.users.find((x) => x.username === u);
      if (!user) throw new Error(`no demo user ${u}`);
      return {
        ...stack.gitEnv(u),
        GIT_SSH_COMMAND: [
          'ssh -F /dev/null',
          `-i ${user.privateKey}`,
          '-o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR',
          `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${shortRouter.knownHosts}`,
        ].join(' '),
      };
    },
    counters: () => shortRouter.counters(),
  };
});

afterAll(async () => {
  await shortRouter?.stop();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let seq = 0;

/** Successful upload-pack tunnels each cell's bridge served so far. */
async function tunnelsByCell(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const cell of stack.json.cells) {
    const counters = await fetchCounters(cell.metrics);
    out[cell.name] = Object.entries(counters)
      .filter(([k]) => k.startsWith('bridge_tunnels_total{') && k.includes('route="ssh_upload_pack"'))
      .filter(([k]) => k.includes('outcome="ok"'))
      .reduce((n, [, v]) => n + v, 0);
  }
  return out;
}

/** What one step changed: learn calls, 421 redirects and which bridge served a clone. */
async function measure<T>(router: RouterUnderTest, step: () => Promise<T>) {
  const [before, tunnelsBefore] = await Promise.all([router.counters(), tunnelsByCell()]);
  const result = await step();
  const [after, tunnelsAfter] = await Promise.all([router.counters(), tunnelsByCell()]);
  const servedBy = Object.keys(tunnelsAfter).filter((c) => (tunnelsAfter[c] ?? 0) > (tunnelsBefore[c] ?? 0));
  return {
    result,
    learns: (after[LEARNS] ?? 0) - (before[LEARNS] ?? 0),
    redirects: (after[REDIRECTS] ?? 0) - (before[REDIRECTS] ?? 0),
    servedBy,
  };
}

async function clone(router: RouterUnderTest, user: string, project: string) {
  const target = join(dir, `clone-${++seq}`);
  const r = await run('git', ['clone', '-q', router.url(project), target], {
    env: router.env(user),
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`clone of ${project} via ${router.name} failed: ${r.stderr}`);
  return (await runOk('git', ['-C', target, 'rev-parse', 'HEAD'])).trim();
}

async function page(router: RouterUnderTest, path: string) {
  const res = await fetch(`${router.http}${path}`, { redirect: 'manual' });
  await res.arrayBuffer();
  return { status: res.status, cell: res.headers.get('x-gitlab-cell') };
}

async function moveOrganization(organization: string, cell: string) {
  const key = jwtKey(readSecretFile(stack.json.secrets.shell, 'shell secret'));
  const rails = stack.json.cells[0]?.rails;
  const res = await fetch(`${rails}/api/v4/internal/admin/organizations/${organization}/move`, {
    method: 'POST',
    headers: { [SHELL_HEADER]: await signShellJwt(key), 'content-type': 'application/json' },
    body: JSON.stringify({ cell }),
  });
  const body = (await res.json()) as { from: string; to: string; repositories: { moved: boolean }[] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** HEAD of the moved project's bare repository, in the storage of `cell`. */
async function headIn(cell: string): Promise<string> {
  const repo = stack.project(MOVED_PROJECT).repository.replace('/cells/cell_eu0/', `/cells/${cell}/`);
  return (await runOk('git', ['--git-dir', repo, 'rev-parse', 'main'])).trim();
}

describe('learned routes over SSH', () => {
  it('learns a namespace once: the second clone from it makes no learn call', async () => {
    const first = await measure(usRouter, () => clone(usRouter, 'dave', MOVED_PROJECT));
    const second = await measure(usRouter, () => clone(usRouter, 'dave', 'my-company/my-other-project'));
    expect([first.learns, first.redirects, first.servedBy]).toEqual([1, 0, ['cell_eu0']]);
    expect([second.learns, second.redirects, second.servedBy]).toEqual([0, 0, ['cell_eu0']]);
  });
});

describe('an organization moves to another cell', () => {
  it('right after the move, the next clone and page are served by the new cell after one 421', async () => {
    const warm = await measure(usRouter, () => page(usRouter, '/john.doe/notes'));
    expect(warm.result).toEqual({ status: 200, cell: 'cell_eu0' });

    const moved = await moveOrganization('my-organization', 'cell_eu1');
    expect([moved.from, moved.to]).toEqual(['cell_eu0', 'cell_eu1']);
    expect(moved.repositories.filter((r) => r.moved).length).toBeGreaterThanOrEqual(3);

    const sshAfter = await measure(usRouter, () => clone(usRouter, 'dave', MOVED_PROJECT));
    expect([sshAfter.learns, sshAfter.redirects, sshAfter.servedBy]).toEqual([1, 1, ['cell_eu1']]);
    expect(sshAfter.result).toBe(await headIn('cell_eu1'));

    // /my-company was learned again; /john.doe (same organization) is still cached for cell_eu0.
    const httpAfter = await measure(usRouter, () => page(usRouter, '/john.doe/notes'));
    expect(httpAfter.result).toEqual({ status: 200, cell: 'cell_eu1' });
    expect([httpAfter.learns, httpAfter.redirects]).toEqual([1, 1]);

    const settled = await measure(usRouter, () => clone(usRouter, 'dave', 'my-company/my-other-project'));
    expect([settled.learns, settled.redirects, settled.servedBy]).toEqual([0, 0, ['cell_eu1']]);
  });

  it('a router whose cached routes expired learns the new cell without a 421', async () => {
    // The organization is on cell_eu1 now; the short-lived router learns that and caches it.
    const firstLearn = Date.now();
    const ssh1 = await measure(euShort, () => clone(euShort, 'dave', MOVED_PROJECT));
    const http1 = await measure(euShort, () => page(euShort, '/john.doe/notes'));
    const lastLearn = Date.now();
    const ssh2 = await measure(euShort, () => clone(euShort, 'dave', MOVED_PROJECT));
    const http2 = await measure(euShort, () => page(euShort, '/john.doe/notes'));
    // Both routes were still cached for the second round (else the machine is too slow for this test).
    expect(Date.now() - firstLearn).toBeLessThan(SHORT_TTL_MS);
    expect([ssh1.learns, ssh1.servedBy, ssh2.learns, ssh2.servedBy]).toEqual([
      1,
      ['cell_eu1'],
      0,
      ['cell_eu1'],
    ]);
    expect([http1.result.cell, http1.learns, http2.result.cell, http2.learns]).toEqual([
      'cell_eu1',
      1,
      'cell_eu1',
      0,
    ]);

    await moveOrganization('my-organization', 'cell_eu0');
    const wait = lastLearn + SHORT_TTL_MS + 500 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));

    const ssh3 = await measure(euShort, () => clone(euShort, 'dave', MOVED_PROJECT));
    expect([ssh3.learns, ssh3.redirects, ssh3.servedBy]).toEqual([1, 0, ['cell_eu0']]);
    expect(ssh3.result).toBe(await headIn('cell_eu0'));
    const http3 = await measure(euShort, () => page(euShort, '/john.doe/notes'));
    expect([http3.result, http3.learns, http3.redirects]).toEqual([{ status: 200, cell: 'cell_eu0' }, 1, 0]);
  });
});
