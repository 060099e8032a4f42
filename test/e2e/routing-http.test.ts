import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, SHELL_HEADER, signShellJwt } from '../../lib/jwt.js';
import { decodeRoutableToken } from '../../lib/routable-token.js';
import { readSecretFile } from '../../lib/secrets.js';
import type { CellConfig } from '../../router/config.js';
import { fetchCounters, type SpawnedRouter, spawnRouter } from '../../router/test-support/spawned-router.js';
import { demoWorld } from '../../stack/topology-file-load.js';
import { type Answer, HttpClient, type RequestOptions, signInForm } from '../helpers/http-client.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * The HTTP front of the real router processes in front of the demo stack (mock cells behind their
 * bridges): every request flow of seed 000, rule-based routing (session cookie, PAT, runner token),
 * learn failures and a replay of the cells' route snapshot. `X-Gitlab-Cell` on each answer says
 * which cell served it; the routers' Prometheus counters say how many learn calls were made.
 *
 * Routers: the stack's own (region us, "Router US" of the seed), plus routers of region eu started
 * here against the same cells ("Router EU"), and one whose only regional cell is down.
 */
let stack: RunningStack;
let dir: string;
let euRouter: SpawnedRouter;
const spawned: SpawnedRouter[] = [];

const LEARNS = 'gitlab_cells_router_learn_requests_total';
const FALLBACKS = 'gitlab_cells_router_fallbacks_total';
const RULE_ROUTED = 'gitlab_cells_router_http_rule_routed_total';
const RULE_REJECTED = 'gitlab_cells_router_http_rule_rejected_total';

function routerCells(): CellConfig[] {
  return stack.json.cells.map((c) => ({
    id: c.id,
    name: c.name,
    legacy: c.legacy,
    region: demoWorld().cells.find((d) => d.name === c.name)?.region ?? 'us',
    url: c.bridge,
  }));
}

async function startRouter(
  name: string,
  region: string,
  cells = routerCells(),
  settings: Record<string, unknown> = {},
): Promise<SpawnedRouter> {
  const router = await spawnRouter({
    dir,
    name,
    shellSecretFile: stack.json.secrets.shell,
    region,
    cells,
    settings,
  });
  spawned.push(router);
  return router;
}

beforeAll(async () => {
  stack = await startStack();
  dir = mkdtempSync(join(tmpdir(), 'routing-http-'));
  euRouter = await startRouter('router-eu', 'eu');
});

afterAll(async () => {
  await Promise.all(spawned.map((r) => r.stop()));
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Hop extends Answer {
  method: string;
  path: string;
  /** Learn calls the router made for this request. */
  learns: number;
}

/** A client of one router that also counts the router's learn calls per request and keeps every hop. */
class Browser extends HttpClient {
  readonly hops: Hop[] = [];

  constructor(
    base: string,
    private readonly counters: () => Promise<Record<string, number>>,
  ) {
    super(base);
  }

  override async request(method: string, path: string, opts: RequestOptions = {}): Promise<Hop> {
    const before = (await this.counters())[LEARNS] ?? 0;
    const answer = await super.request(method, path, opts);
    const learns = ((await this.counters())[LEARNS] ?? 0) - before;
    const hop: Hop = { method, path, learns, ...answer };
    this.hops.push(hop);
    return hop;
  }

  /** GET `path` and every redirect after it; the hops of this visit. */
  async visit(path: string, headers: Record<string, string> = {}): Promise<Hop[]> {
    const hops: Hop[] = [];
    let next: string | null = path;
    while (next !== null && hops.length < 5) {
      const hop = await this.request('GET', next, { headers });
      hops.push(hop);
      next = hop.status >= 300 && hop.status < 400 && hop.location ? localPath(hop.location) : null;
    }
    return hops;
  }

  override signIn(login: string, path = '/users/sign_in'): Promise<Hop> {
    return this.request('POST', path, signInForm(login));
  }
}

function localPath(location: string): string {
  const u = new URL(location, 'http://router.invalid');
  return `${u.pathname}${u.search}`;
}

const browser = (router: { http: string; counters(): Promise<Record<string, number>> }) =>
  new Browser(router.http, () => router.counters());
const usRouter = () => ({
  http: stack.json.router.http,
  counters: () => fetchCounters(stack.json.routerMetrics),
});

/** Cell, status and learn calls of each hop, for one readable assertion per flow. */
const summary = (hops: Hop[]) =>
  hops.map((h) => `${h.method} ${h.path} → ${h.status} ${h.cell} learns=${h.learns}`);

describe('seed 000 flows, a user of my-organization through Router EU', () => {
  it('signed out, /my-company/my-project: learn, sign-in redirect to the /users cell, back to EU0', async () => {
    const dave = browser(euRouter);
    const first = await dave.visit('/my-company/my-project');
    const signIn = await dave.signIn('dave', first[1]?.path);
    const back = await dave.visit(localPath(signIn.location ?? ''));
    expect(summary([...first, signIn, ...back])).toEqual([
      'GET /my-company/my-project → 302 cell_eu0 learns=1',
      'GET /users/sign_in?redirect=/my-company/my-project → 200 cell_us0 learns=1',
      'POST /users/sign_in?redirect=/my-company/my-project → 302 cell_us0 learns=0',
      'GET /my-company/my-project → 200 cell_eu0 learns=0',
    ]);
    expect(first[0]?.location).toBe('/users/sign_in?redirect=/my-company/my-project');
    expect(signIn.location).toBe('/my-company/my-project');
    expect(first[1]?.body).toContain('Sign in');
    // Rails gives the session the prefix of the cell of dave's organization (cell_eu0 = 3).
    expect(dave.session).toMatch(/^cell-3-[0-9a-f]{32}$/);
    expect(back[0]?.body).toContain('My Company / my-project · cell_eu0');
  });

  it('signed in, /my-company/my-project with a cold cache: one learn, then zero for the namespace', async () => {
    const fresh = await startRouter('router-eu-cold', 'eu');
    const dave = browser(fresh);
    await dave.signIn('dave');
    const project = await dave.visit('/my-company/my-project');
    const other = await dave.visit('/my-company/my-other-project');
    expect(summary([...project, ...other])).toEqual([
      'GET /my-company/my-project → 200 cell_eu0 learns=1',
      'GET /my-company/my-other-project → 200 cell_eu0 learns=0',
    ]);
    expect(other[0]?.body).toContain('My Company / my-other-project · cell_eu0');
  });

  it('/gitlab-org/gitlab after that: the learn names the legacy cell US0', async () => {
    const dave = browser(euRouter);
    await dave.signIn('dave');
    const hops = await dave.visit('/gitlab-org/gitlab');
    expect(summary(hops)).toEqual(['GET /gitlab-org/gitlab → 200 cell_us0 learns=1']);
    expect(hops[0]?.body).toContain('GitLab.org / gitlab · cell_us0');
  });

  it('/ and /dashboard: the session picks EU0, which sends the user to the organization dashboard', async () => {
    const dave = browser(euRouter);
    await dave.signIn('dave');
    const root = await dave.visit('/');
    const dashboard = await dave.visit('/dashboard');
    expect(summary([...root, ...dashboard])).toEqual([
      // Rails does not let the router cache `/` or `/dashboard` (cache_ttl 0): one learn each time.
      'GET / → 302 cell_eu0 learns=1',
      'GET /organizations/my-organization/-/dashboard → 200 cell_eu0 learns=1',
      'GET /dashboard → 302 cell_eu0 learns=1',
      'GET /organizations/my-organization/-/dashboard → 200 cell_eu0 learns=0',
    ]);
    expect(root[1]?.body).toContain('My Organization dashboard · cell_eu0');
  });

  it('signed in, a private project of another organization: 404 from the cell that owns it (US1)', async () => {
    const dave = browser(euRouter);
    await dave.signIn('dave');
    const first = await dave.visit('/not-my-company/not-my-project');
    const known = await dave.visit('/not-my-company/not-my-project');
    expect(summary([...first, ...known])).toEqual([
      'GET /not-my-company/not-my-project → 404 cell_us1 learns=1',
      'GET /not-my-company/not-my-project → 404 cell_us1 learns=0',
    ]);
  });
});

describe('seed 000 flows, a GitLab team member (gitlab-org) through Router US', () => {
  it('signed out, /gitlab-org/gitlab: US0 serves it; the router knows it afterwards', async () => {
    const bob = browser(usRouter());
    const hops = [
      ...(await bob.visit('/gitlab-org/gitlab')),
      ...(await bob.visit('/gitlab-org/gitlab-test')),
    ];
    expect(summary(hops)).toEqual([
      'GET /gitlab-org/gitlab → 200 cell_us0 learns=1',
      'GET /gitlab-org/gitlab-test → 200 cell_us0 learns=0',
    ]);
  });

  it('/: redirected to the legacy /dashboard, served by the legacy cell US0', async () => {
    const bob = browser(usRouter());
    await bob.signIn('bob');
    expect(bob.session).toMatch(/^cell-1-/);
    const hops = await bob.visit('/');
    expect(summary(hops)).toEqual([
      'GET / → 302 cell_us0 learns=1',
      'GET /dashboard → 200 cell_us0 learns=1',
    ]);
    expect(hops[1]?.body).toContain('Dashboard · cell_us0');
  });

  it('signed in, the private /my-company/my-other-project: 404 from EU0', async () => {
    const bob = browser(usRouter());
    await bob.signIn('bob');
    const hops = await bob.visit('/my-company/my-other-project');
    expect(hops.map((h) => [h.status, h.cell])).toEqual([[404, 'cell_eu0']]);
  });

  it('/admin is pinned to the legacy cell', async () => {
    const root = browser(usRouter());
    await root.signIn('root');
    const hops = await root.visit('/admin');
    expect(hops.map((h) => [h.status, h.cell])).toEqual([[200, 'cell_us0']]);
    expect(hops[0]?.body).toContain('Admin Area · cell_us0');
  });
});

describe('routing by rules', () => {
  it('routes the session cookie to the cell of its prefix where the path does not decide', async () => {
    const dave = browser(euRouter);
    await dave.signIn('dave');
    const before = (await euRouter.counters())[RULE_ROUTED] ?? 0;
    const me = await dave.request('GET', '/api/v4/user');
    expect([me.status, me.cell]).toEqual([200, 'cell_eu0']);
    expect(JSON.parse(me.body)).toMatchObject({ username: 'dave' });
    expect((await euRouter.counters())[RULE_ROUTED]).toBe(before + 1);
    const anonymous = await browser(euRouter).request('GET', '/api/v4/user');
    expect([anonymous.status, anonymous.cell]).toEqual([401, 'cell_us0']);
  });

  it('routes personal access tokens by the cell id they carry', async () => {
    const dave = browser(euRouter);
    await dave.signIn('dave');
    const created = await dave.request('POST', '/api/v4/user/personal_access_tokens', {
      json: { name: 'routing', scopes: ['api'] },
    });
    expect([created.status, created.cell]).toEqual([201, 'cell_eu0']);
    const token = (JSON.parse(created.body) as { token: string }).token;
    expect(decodeRoutableToken(token).fields.c).toBe('3');
    const anonymous = browser(euRouter);
    const placements: Record<string, string>[] = [
      { 'private-token': token },
      { authorization: `Bearer ${token}` },
    ];
    for (const headers of placements) {
      const me = await anonymous.request('GET', '/api/v4/user', { headers });
      expect([me.status, me.cell, JSON.parse(me.body).username]).toEqual([200, 'cell_eu0', 'dave']);
    }
    // A path that names its owner still wins over the token's cell.
    const project = await anonymous.request('GET', '/api/v4/projects/1', {
      headers: { 'private-token': token },
    });
    expect([project.status, project.cell]).toEqual([200, 'cell_us0']);
  });

  it('routes runner tokens to the only cell that knows the runner', async () => {
    const dave = browser(euRouter);
    await dave.signIn('dave');
    const created = await dave.request('POST', '/api/v4/user/runners', {
      json: { runner_type: 'project_type', project_id: 3 },
    });
    expect([created.status, created.cell]).toEqual([201, 'cell_eu0']);
    const token = (JSON.parse(created.body) as { token: string }).token;
    expect(token).toMatch(/^glrt-/);
    const runner = browser(euRouter);
    const verified = await runner.request('POST', '/api/v4/runners/verify', {
      headers: { 'runner-token': token },
      json: {},
    });
    expect([verified.status, verified.cell]).toEqual([200, 'cell_eu0']);
    // Without the rule the request would reach the legacy cell, which does not know the runner.
    const legacy = await runner.request('POST', '/api/v4/runners/verify', { json: { token } });
    expect([legacy.status, legacy.cell]).toEqual([403, 'cell_us0']);
  });

  it('answers 400 itself for a malformed routable token, without a learn call', async () => {
    const bad = `glpat-${Buffer.concat([Buffer.alloc(16), Buffer.from('c:3'), Buffer.from([0x60])]).toString('base64url')}.01.0r0000000`;
    const before = await euRouter.counters();
    const res = await browser(euRouter).request('GET', '/api/v4/user', { headers: { 'private-token': bad } });
    expect([res.status, res.cell, res.learns]).toEqual([400, null, 0]);
    expect(JSON.parse(res.body).message).toMatch(/^400 Bad Request: malformed routable token/);
    expect((await euRouter.counters())[RULE_REJECTED]).toBe((before[RULE_REJECTED] ?? 0) + 1);
  });

  it('answers 404 itself for the internal API on the public side', async () => {
    for (const path of ['/api/v4/internal/check', '//api/v4/internal/cells/learn?method=GET&path_info=/x']) {
      const res = await browser(euRouter).request('GET', path);
      expect([res.status, res.cell]).toEqual([404, null]);
    }
  });
});

describe('learn failures', () => {
  let downRouter: SpawnedRouter;

  beforeAll(async () => {
    // A region whose only cell refuses connections (a port that was free a moment ago).
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    downRouter = await startRouter('router-ap', 'ap', [
      ...routerCells(),
      { id: 5, name: 'cell_ap0', legacy: false, region: 'ap', url: `http://127.0.0.1:${port}` },
    ]);
  });

  it('sends requests to the legacy cell when learning fails, unless a rule names a cell', async () => {
    const before = await downRouter.counters();
    const plain = await browser(downRouter).request('GET', '/gitlab-org/gitlab');
    expect([plain.status, plain.cell]).toEqual([200, 'cell_us0']);
    const dave = browser(downRouter);
    await dave.signIn('dave');
    const project = await dave.request('GET', '/my-company/my-project');
    expect([project.status, project.cell]).toEqual([200, 'cell_eu0']);
    const after = await downRouter.counters();
    // Every learn failed: the two GETs and the sign-in fell back, none was cached.
    expect((after[FALLBACKS] ?? 0) - (before[FALLBACKS] ?? 0)).toBe(3);
    expect((after[LEARNS] ?? 0) - (before[LEARNS] ?? 0)).toBe(3);
    expect(after.gitlab_cells_router_route_cache_hits_total).toBe(0);
  });
});

describe('route snapshot replay', () => {
  interface SnapshotEntry {
    template: string;
    example: string;
    acceptsFormat?: true;
    dottedExample?: string;
  }

  async function internal(path: string): Promise<unknown> {
    const key = jwtKey(readSecretFile(stack.json.secrets.shell, 'shell secret'));
    const rails = stack.json.cells.find((c) => c.name === 'cell_eu1')?.rails;
    const res = await fetch(`${rails}/api/v4/internal${path}`, {
      headers: { [SHELL_HEADER]: await signShellJwt(key) },
    });
    expect(res.status).toBe(200);
    return res.json();
  }

  it('lands every example, .json, dotted and dotted .json path on the cell learn names', async () => {
    const entries = (await internal('/cells/routes_snapshot')) as SnapshotEntry[];
    expect(entries.length).toBeGreaterThan(30);
    const paths = entries.flatMap((e) => [
      e.example,
      ...(e.acceptsFormat ? [`${e.example}.json`] : []),
      ...(e.dottedExample ? [e.dottedExample] : []),
      ...(e.dottedExample && e.acceptsFormat ? [`${e.dottedExample}.json`] : []),
    ]);
    const replay = browser(euRouter);
    const mismatches: string[] = [];
    const cells = new Set<string>();
    for (const path of paths) {
      const hop = await replay.request('GET', path);
      const internalApi = /^\/api\/v4\/internal(?:[/.]|$)/.test(path);
      let expected: string | null = null;
      if (!internalApi) {
        const answer = (await internal(`/cells/learn?method=GET&path_info=${encodeURIComponent(path)}`)) as {
          cell: string;
        };
        expected = answer.cell;
      }
      if (hop.cell !== expected || (internalApi && hop.status !== 404)) {
        mismatches.push(`${path}: served by ${hop.cell} (${hop.status}), learn names ${expected}`);
      }
      if (hop.cell) cells.add(hop.cell);
    }
    expect(mismatches).toEqual([]);
    // The dotted examples name john.doe, a namespace away from the legacy cell.
    expect(cells).toContain('cell_eu0');
    expect(paths).toContain('/john.doe/bar/john.doe.json');
  });

  it('serves dotted and suffixed namespaces from their own cells', async () => {
    const client = browser(euRouter);
    const got = [];
    for (const path of [
      '/john.doe',
      '/john.doe.json',
      '/john.doe/notes',
      '/john.doe/notes.json',
      '/acme.corp/www.site',
      '/acme.corp/www.site.json',
      '/acme.corp',
      '/acme',
      '/john',
    ]) {
      const hop = await client.request('GET', path);
      got.push(`${path} ${hop.status} ${hop.cell}`);
    }
    expect(got).toEqual([
      '/john.doe 200 cell_eu0',
      '/john.doe.json 200 cell_eu0',
      '/john.doe/notes 200 cell_eu0',
      '/john.doe/notes.json 200 cell_eu0',
      '/acme.corp/www.site 200 cell_us1',
      '/acme.corp/www.site.json 200 cell_us1',
      '/acme.corp 200 cell_us1',
      '/acme 404 cell_us0',
      '/john 404 cell_us0',
    ]);
  });
});
