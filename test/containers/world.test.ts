import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { composeNet, TOPOLOGY_SERVICE } from '../../stack/compose-init.js';
import { geoServiceName, ROUTER_TOPOLOGY } from '../../stack/compose-plan.js';
import { geoPaths } from '../../stack/geo-plan.js';
import { composeServiceName, stackPaths, stackPorts } from '../../stack/layout.js';
import { worldTopology } from '../../stack/topology-file-convert.js';
import { demoWorld } from '../../stack/topology-file-load.js';
import type { WorldCell } from '../../stack/topology-file-resolve.js';
import { run } from '../helpers/run.js';
import { detectEngine } from './engine.js';
import { type ClientRun, loadCompose, World } from './world.js';

/*
 * The compose world for real: every service of compose.yaml in its own container (testcontainers
 * against the engine at DOCKER_HOST), real git and OpenSSH in the `client` container. Run by
 * `npm run test:containers` (not by `npm test`). Without an engine it skips and says why, except
 * under CONTAINERS_REQUIRED=1 (.ci/run), where no engine is a failure.
 */

const engine = await detectEngine();
const required = process.env.CONTAINERS_REQUIRED === '1';
if (!engine.ok) process.stderr.write(`test/containers: skipped: ${engine.reason}\n`);

const paths = stackPaths('/data');
const topology = worldTopology(demoWorld(), stackPorts(0), paths, {}, composeNet());
/** Where each demo project's bare repository is inside its cell's Gitaly container. */
const repos = demoWorld().projects.map((p) => {
  const full = `${p.namespace}/${p.path}`;
  const org = topology.namespaces.find((n) => n.path === p.namespace)?.organization;
  const cellName = topology.organizations.find((o) => o.path === org)?.cell;
  const cell = demoWorld().cells.find((c) => c.name === cellName);
  if (!cell) throw new Error(`no cell for ${full}`);
  return {
    full,
    cell,
    gitaly: composeServiceName('gitaly', cell),
    bridge: composeServiceName('bridge', cell),
    dir: join(paths.storage(cell.name), hashedRepoPath(p.id)),
  };
});
const repoOf = (full: string) => {
  const r = repos.find((x) => x.full === full);
  if (!r) throw new Error(`not a demo project: ${full}`);
  return r;
};

/** Where cell_us0's Geo secondary keeps its replica of a project, and the Gitaly container serving it. */
const GEO_CELL = demoWorld().cells[0] as WorldCell;
const replicaOf = (full: string) => {
  const r = repoOf(full);
  const primaryStorage = paths.storage(GEO_CELL.name);
  return {
    gitaly: geoServiceName('gitaly', GEO_CELL),
    dir: `${geoPaths(paths, GEO_CELL).storage}${r.dir.slice(primaryStorage.length)}`,
  };
};

/** `refname sha` of every branch and tag of a bare repository inside its Gitaly container. */
async function bareRefs(
  world: World,
  full: string,
  at: { gitaly: string; dir: string } = repoOf(full),
): Promise<Map<string, string>> {
  const r = at;
  const out = await world.exec(r.gitaly, [
    'git',
    '--git-dir',
    r.dir,
    'for-each-ref',
    '--format=%(refname) %(objectname)',
    'refs/heads',
    'refs/tags',
  ]);
  expect(out.exitCode, out.output).toBe(0);
  return new Map(
    out.output
      .trim()
      .split('\n')
      .map((l) => l.trim().split(' ') as [string, string]),
  );
}

function lines(run: ClientRun, tag: string): string[][] {
  return run.output
    .split('\n')
    .filter((l) => l.startsWith(`${tag} `))
    .map((l) => l.split(' '));
}

describe.skipIf(!engine.ok && !required)('the compose world in containers', () => {
  let world: World;
  const log = (line: string) => {
    process.stderr.write(`test/containers: ${line}\n`);
  };

  beforeAll(async () => {
    if (!engine.ok) throw new Error(`CONTAINERS_REQUIRED=1 but ${engine.reason}`);
    const image = loadCompose().services.router?.image ?? 'gitlab-cells-ssh:dev';
    if (!(await imageExists(image))) {
      throw new Error(`image ${image} is missing: build it with scripts/build-images.sh`);
    }
    world = new World(engine, loadCompose(), log);
    const started = Date.now();
    await world.up();
    log(
      `world up (${world.containers.size} services) in ${Date.now() - started} ms on ${engine.podman ? 'podman' : 'docker'} ${engine.version}`,
    );
  }, 600_000);

  afterAll(async () => {
    await world?.down();
  }, 120_000);

  async function imageExists(image: string): Promise<boolean> {
    if (!engine.ok) return false;
    try {
      await engine.client.container.dockerode.getImage(image).inspect();
      return true;
    } catch {
      return false;
    }
  }

  it('runs every service of compose.yaml (but the client and profiles) healthy, on a network of its own', async () => {
    const compose = loadCompose();
    const expected = Object.entries(compose.services)
      .filter(([name, s]) => !s.profiles && name !== 'client' && name !== 'init')
      .map(([name]) => name)
      .sort();
    expect([...world.containers.keys()].sort()).toEqual(expected);
    for (const name of expected) {
      const info = await world.inspect(name);
      expect(info.State.Running, name).toBe(true);
      expect(info.Config.User, name).toBe('node');
      expect(info.HostConfig.RestartPolicy?.Name, name).toBe('unless-stopped');
      expect(Object.keys(info.NetworkSettings.Networks), name).toHaveLength(1);
    }
    // the router's ports are published on the host's loopback only
    const bindings = (await world.inspect('router')).HostConfig.PortBindings as Record<
      string,
      Array<{ HostIp: string }>
    >;
    expect(Object.keys(bindings).sort()).toEqual(['2222/tcp', '8080/tcp']);
    for (const b of Object.values(bindings)) expect(b.map((x) => x.HostIp)).toEqual(['127.0.0.1']);
    for (const [name, port] of [
      [ROUTER_TOPOLOGY, 2223],
      [geoServiceName('router', GEO_CELL), 2224],
    ] as const) {
      expect((await world.hostPort(name, port)).ip, name).toBe('127.0.0.1');
    }
  });

  it('clones through the topology router: the Topology Service names each project’s cell, reached at its bridge', async () => {
    const ports = stackPorts(0);
    const env = { ROUTER_SSH: `${ROUTER_TOPOLOGY}:${ports.routerTopologySsh}` };
    // one project per cell that owns one, each as a user who may read it
    const cases: Array<[string, string]> = [
      ['gitlab-org/gitlab-test', 'bob'],
      ['not-my-company/not-my-project', 'root'],
      ['my-company/my-project', 'alice'],
    ];
    expect(new Set(cases.map(([full]) => repoOf(full).cell.name)).size).toBe(cases.length);
    for (const [full, user] of cases) {
      const r = await world.runClient(['clone', full, user], env);
      expect(r.output, r.output).toMatch(/scenario: 1 ok, 0 failed/);
      expect(r.exitCode).toBe(0);
      const bare = await bareRefs(world, full);
      const seen = lines(r, 'REF').filter((l) => l[1] === full);
      expect(seen.length, full).toBeGreaterThan(0);
      for (const [, , ref = '', sha] of seen) {
        expect(bare.get(ref.replace('refs/remotes/origin/', 'refs/heads/')), `${full} ${ref}`).toBe(sha);
      }
    }
    // the topology router asked the Topology Service: its Classify counter moved
    const metrics = await world.exec(ROUTER_TOPOLOGY, [
      'node',
      '-e',
      `fetch('http://127.0.0.1:${ports.routerTopologyMetrics}/metrics').then(async (r) => console.log(await r.text()))`,
    ]);
    const counter = (name: string) =>
      Number(new RegExp(`^gitlab_cells_router_${name}_total (\\d+)`, 'm').exec(metrics.output)?.[1] ?? -1);
    expect(counter('topology_classifies'), metrics.output).toBeGreaterThanOrEqual(cases.length);
    expect(counter('topology_errors')).toBe(0);
    expect(counter('topology_not_found')).toBe(0);
  });

  it('pushes through the Geo secondary’s SSH entry: the push lands on the primary and replicates back', async () => {
    const ports = stackPorts(0).geo(GEO_CELL.id);
    const full = 'gitlab-org/gitlab-test';
    expect(repoOf(full).cell.name).toBe(GEO_CELL.name);
    const r = await world.runClient(['push', full, 'bob'], {
      ROUTER_SSH: `${geoServiceName('router', GEO_CELL)}:${ports.ssh}`,
    });
    expect(r.output, r.output).toMatch(/scenario: 2 ok, 0 failed/);
    expect(r.exitCode).toBe(0);
    // the secondary's console lines: forwarded to the primary's SSH entry
    const remote = r.output.split('\n').filter((l) => l.startsWith('REMOTE '));
    expect(remote.join('\n')).toContain(
      'REMOTE This request to a Geo secondary node will be forwarded to the',
    );
    expect(remote.join('\n')).toContain(`ssh://git@router:2222/${full}.git`);
    const [, project, ref = '', sha = ''] = lines(r, 'PUSH')[0] ?? [];
    expect(project).toBe(full);
    expect((await bareRefs(world, full)).get(ref), 'the primary has the pushed branch').toBe(sha);
    // the primary tells the secondary, which fetches the push into its replica
    const deadline = Date.now() + 30_000;
    let replica = await bareRefs(world, full, replicaOf(full));
    while (replica.get(ref) !== sha && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 500));
      replica = await bareRefs(world, full, replicaOf(full));
    }
    expect(replica.get(ref), 'the replica followed the primary').toBe(sha);
  });

  it('the Topology Service is healthy and classifies each demo project’s route to the cell that claimed it', async () => {
    await world.waitHealthy(TOPOLOGY_SERVICE, 30_000);
    expect((await world.inspect(TOPOLOGY_SERVICE)).State.Running).toBe(true);
    // POST /v1/classify over the world's network, by service name, from the router's container
    const url = `http://${TOPOLOGY_SERVICE}:${stackPorts(0).topologyHttp}/v1/classify`;
    const classify = async (body: object) => {
      const script = `fetch(${JSON.stringify(url)}, {method: 'POST', body: ${JSON.stringify(JSON.stringify(body))}}).then(async (r) => console.log(r.status, await r.text()), (e) => { console.log('ERR', e.message); process.exit(1); })`;
      const r = await world.exec('router', ['node', '-e', script]);
      expect(r.exitCode, r.output).toBe(0);
      const text = r.output.trim();
      const at = text.indexOf(' ');
      return {
        status: Number(text.slice(0, at)),
        body: JSON.parse(text.slice(at + 1)) as Record<string, unknown>,
      };
    };
    const routes = new Map(repos.map((r) => [r.full.split('/')[0] as string, r.cell]));
    expect(routes.size).toBeGreaterThan(1);
    for (const [route, cell] of routes) {
      // the mock cells claim once all their cells listen; allow a few seconds for that
      let got = await classify({ claims: [{ route }] });
      const deadline = Date.now() + 15_000;
      while (got.status !== 200 && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 500));
        got = await classify({ claims: [{ route }] });
      }
      expect(got, route).toEqual({
        status: 200,
        body: {
          action: 'PROXY',
          proxy: { address: composeServiceName('bridge', cell) },
          matchedClaim: { route },
        },
      });
    }
    // a route no cell claimed is NOT_FOUND (gRPC code 5), as gitlab-shell then uses its default host
    const unknown = await classify({ claims: [{ route: 'no-such-namespace' }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe(5);
  });

  it('client scenario: clones every demo project, pushes a branch, archives, is denied a private project', async () => {
    const started = Date.now();
    const r = await world.runClient(['all']);
    log(`client scenario in ${Date.now() - started} ms`);
    expect(r.output).toMatch(/scenario: \d+ ok, 0 failed/);
    expect(lines(r, 'FAIL')).toEqual([]);
    expect(r.exitCode, r.output).toBe(0);

    // every demo project was cloned, and each clone's branches are the bare repository's, in its cell's Gitaly
    const cloned = lines(r, 'CLONE').map((l) => l[1]);
    expect(cloned.sort()).toEqual(repos.map((x) => x.full).sort());
    const pushed = lines(r, 'PUSH');
    expect(pushed).toHaveLength(1);
    const [, pushedProject = '', pushedRef = '', pushedSha = ''] = pushed[0] ?? [];
    for (const full of cloned as string[]) {
      const bare = await bareRefs(world, full);
      const seen = lines(r, 'REF').filter((l) => l[1] === full);
      expect(seen.length, full).toBeGreaterThan(0);
      for (const [, , ref = '', sha] of seen) {
        const branch = ref.replace('refs/remotes/origin/', 'refs/heads/');
        expect(bare.get(branch), `${full} ${branch}`).toBe(sha);
      }
      // the clone has every branch the repository had before the push
      const branches = [...bare.keys()].filter((k) => k.startsWith('refs/heads/') && k !== pushedRef);
      expect(
        seen.map((l) => (l[2] ?? '').replace('refs/remotes/origin/', 'refs/heads/')).sort(),
        full,
      ).toEqual(expect.arrayContaining(branches.sort()));
    }
    // the pushed branch is in the bare repository, at the pushed commit
    expect(pushedProject).toBe('my-company/my-project');
    expect((await bareRefs(world, pushedProject)).get(pushedRef)).toBe(pushedSha);
    expect(lines(r, 'ARCHIVE')).toHaveLength(1);
    expect(lines(r, 'DENIED')).toHaveLength(1);
  });

  it('clones from the host through the router port published on 127.0.0.1', async () => {
    const { ip, port } = await world.hostPort('router', 2222);
    expect(ip).toBe('127.0.0.1');
    const tmp = await mkdtemp(join(tmpdir(), 'cells-ct-host-'));
    try {
      const key = await world.exec('router', ['cat', paths.userKey('alice')]);
      const hostKey = await world.exec('router', ['cat', `${paths.hostKey}.pub`]);
      expect(key.exitCode).toBe(0);
      await writeFile(join(tmp, 'alice'), key.output, { mode: 0o600 });
      await chmod(join(tmp, 'alice'), 0o600);
      const [type, body] = hostKey.output.trim().split(' ');
      await writeFile(join(tmp, 'known_hosts'), `[127.0.0.1]:${port} ${type} ${body}\n`);
      const ssh = `ssh -i ${join(tmp, 'alice')} -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=${join(tmp, 'known_hosts')} -o StrictHostKeyChecking=yes`;
      const r = await run(
        'git',
        ['clone', '--quiet', `ssh://git@127.0.0.1:${port}/my-company/my-project.git`, join(tmp, 'clone')],
        { env: { ...process.env, GIT_SSH_COMMAND: ssh }, timeoutMs: 60_000 },
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const head = await run('git', ['-C', join(tmp, 'clone'), 'rev-parse', 'origin/main']);
      expect((await bareRefs(world, 'my-company/my-project')).get('refs/heads/main')).toBe(
        head.stdout.trim(),
      );
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('a bridge killed mid-clone: the client gets a clear error, the engine restarts the bridge, clones work again', async () => {
    const target = repoOf('my-company/my-project');
    const before = await world.inspect(target.bridge);
    const routerStartedAt = (await world.inspect('router')).State.StartedAt;
    // the clone is open through router and bridge, its fetch request held after ls-refs
    const client = await world.startClient(['held-clone'], { HOLD_MS: '90000' });
    const output: string[] = [];
    const stream = await world.follow(client);
    stream.on('data', (c: Buffer | string) => output.push(c.toString()));
    const deadline = Date.now() + 60_000;
    while (!output.join('').includes('HOLDING') && Date.now() < deadline) {
      if (output.join('').includes('HELD-CLONE exit')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output.join(''), 'the clone never got to its fetch request').toContain('HOLDING');

    // a crash, not a stop: SIGKILL to the bridge's process. (`docker kill`/`stop` mark a container as
    // stopped by the user, and restart policies leave such containers alone.)
    process.kill(before.State.Pid, 'SIGKILL');
    const killedAt = Date.now();
    const r = await world.waitExit(client, 60_000);
    stream.destroy();
    const endedAfter = Date.now() - killedAt;
    log(`held clone failed ${endedAfter} ms after the bridge was killed`);
    // the error comes from the kill, not from the end of the hold
    expect(endedAfter).toBeLessThan(30_000);
    expect(r.output).toContain('HELD-CLONE exit 128');
    expect(r.exitCode).toBe(128);
    expect(r.output).toMatch(/remote: ERROR: Remote repository is unavailable/);
    expect(r.output).toContain('fatal: the remote end hung up unexpectedly');

    // the engine's restart policy brings the same container back
    const restartDeadline = Date.now() + 60_000;
    let after = await world.inspect(target.bridge);
    while (after.RestartCount <= before.RestartCount && Date.now() < restartDeadline) {
      await new Promise((res) => setTimeout(res, 250));
      after = await world.inspect(target.bridge);
    }
    expect(after.RestartCount).toBeGreaterThan(before.RestartCount);
    expect(after.Id).toBe(before.Id);
    await world.waitHealthy(target.bridge);
    log(`bridge restarted by the engine and healthy ${Date.now() - killedAt} ms after the kill`);
    // the router kept running and reaches the restarted bridge
    expect((await world.inspect('router')).State.StartedAt).toBe(routerStartedAt);
    const again = await world.runClient(['clone', 'my-company/my-project', 'alice']);
    expect(again.output, again.output).toMatch(/scenario: 1 ok, 0 failed/);
    expect(again.exitCode).toBe(0);
  });

  it('a bridge stopped and started again rejoins while the router keeps running', async () => {
    const target = repoOf('acme.corp/www.site');
    const routerStartedAt = (await world.inspect('router')).State.StartedAt;
    const bridge = world.dockerode(target.bridge);
    await bridge.stop({ t: 10 });
    expect((await bridge.inspect()).State.Running).toBe(false);
    // while it is down, its cell's projects fail with the router's message, others still work
    const down = await world.runClient(['clone', 'acme.corp/www.site', 'carol']);
    expect(down.exitCode).not.toBe(0);
    expect(down.output).toMatch(/remote: ERROR: Internal API unreachable/);
    const other = await world.runClient(['clone', 'john.doe/notes', 'john.doe']);
    expect(other.exitCode, other.output).toBe(0);

    await bridge.start();
    await world.waitHealthy(target.bridge);
    const back = await world.runClient(['clone', 'acme.corp/www.site', 'carol']);
    expect(back.output, back.output).toMatch(/scenario: 1 ok, 0 failed/);
    expect(back.exitCode).toBe(0);
    expect((await world.inspect('router')).State.StartedAt).toBe(routerStartedAt);
  });
});
