import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../lib/proto.js';
import type { Topology } from '../../mock-cell/topology-types.js';
import { composeFileFor } from '../../stack/compose-file.js';
import { healthProbes } from '../../stack/compose-health.js';
import {
  composeInit,
  composeServices,
  composeTopologyService,
  GITLAB_GITALY_CELL,
  TOPOLOGY_SERVICE,
} from '../../stack/compose-init.js';
import { geoServiceName, geoVolumeMount, ROUTER_TOPOLOGY } from '../../stack/compose-plan.js';
import { repositoryDirs } from '../../stack/demo-data.js';
import { COMPOSE_NET, composeServiceName, stackPaths, stackPorts } from '../../stack/layout.js';
import { nodeFlagsFor } from '../../stack/node-flags.js';
import { planServices } from '../../stack/stack-config.js';
import { DEMO_TOPOLOGY_FILE, demoWorld, loadTopologyFile } from '../../stack/topology-file-load.js';
import type { WorldCell } from '../../stack/topology-file-resolve.js';
import { run } from '../helpers/run.js';

interface ComposeService {
  command?: string[];
  entrypoint?: string[];
  expose?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  restart?: string;
  networks?: string[];
  profiles?: string[];
  user?: string;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
}

const root = projectRoot();
// anchors merged, as compose does (`<<: *service`)
const compose = parse(readFileSync(join(root, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
  networks: Record<string, unknown>;
};
const paths = stackPaths('/data');
const planned = planServices(demoWorld(), stackPaths('/data'), stackPorts(0), COMPOSE_NET, 'info');
const topologyService = composeTopologyService(stackPaths('/data'), COMPOSE_NET);
const services = composeServices(demoWorld(), paths, COMPOSE_NET);
const usGeo = demoWorld().cells[0] as WorldCell;

function portOf(address: unknown): string {
  return String(address).split(':').pop() as string;
}

/** Every address a config binds (its listen settings). */
function boundPorts(config: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of ['listen', 'sshListen', 'httpListen', 'metricsListen', 'shellListen', 'grpcListen']) {
    const v = config[key];
    if (Array.isArray(v)) out.push(...v.map((l: { address: string }) => portOf(l.address)));
    else if (v !== undefined) out.push(portOf(v));
  }
  return out;
}

/** The container that runs each planned service of the compose world (`composeServices`). */
function expectedContainers() {
  return services.map((s) => ({
    name: s.container,
    main: `dist/${s.spec.service}/main.js`,
    config: s.spec.configFile,
    ports: boundPorts(s.config),
  }));
}

describe('compose.yaml', () => {
  it('has an init service that writes the configs, the stack’s services, the client and the gitlab profile', () => {
    const names = Object.keys(compose.services).sort();
    expect(names).toEqual(
      ['init', 'client', 'gitaly-gitlab', ...expectedContainers().map((e) => e.name)].sort(),
    );
    // the Topology Service is one of the stack's containers; no Geo secondary exists yet; only the
    // real Gitaly is behind a profile
    expect(Object.entries(compose.services).filter(([, s]) => s.profiles)).toEqual([
      ['gitaly-gitlab', expect.objectContaining({ profiles: ['gitlab'] })],
    ]);
    expect(compose.services.init?.command?.join(' ')).toContain('dist/stack/compose-init.js');
  });

  it.each(expectedContainers().map((e) => [e.name, e] as const))(
    'runs %s with the code’s main, node flags, config and ports',
    (name, want) => {
      const svc = compose.services[name] as ComposeService;
      // the flags the stack's supervisor starts the same service with (stack/node-flags.ts)
      const flags = nodeFlagsFor(want.main.split('/')[1] ?? '');
      expect(svc.command).toEqual(['node', ...flags, want.main, '--config', want.config]);
      const published = [
        ...(svc.expose ?? []),
        ...(svc.ports ?? []).map((p) => p.split(':').pop() as string),
      ];
      expect(new Set(published)).toEqual(new Set(want.ports));
    },
  );

  it('publishes the three SSH entries (learn router, topology router, Geo secondary) on 127.0.0.1 only', () => {
    const ports = stackPorts(0);
    const loopback = (port: number) => `127.0.0.1:${port}:${port}`;
    const published = Object.fromEntries(
      Object.entries(compose.services)
        .filter(([, svc]) => svc.ports)
        .map(([name, svc]) => [name, svc.ports]),
    );
    expect(published).toEqual({
      router: [loopback(ports.routerSsh), loopback(ports.routerHttp)],
      [ROUTER_TOPOLOGY]: [loopback(ports.routerTopologySsh), loopback(ports.routerTopologyHttp)],
      [geoServiceName('router', usGeo)]: [loopback(ports.geo(usGeo.id).ssh)],
    });
    expect([ports.routerTopologySsh, ports.geo(usGeo.id).ssh]).toEqual([2223, 2224]);
  });

  it('runs the topology router against the Topology Service, each cell at its bridge host on the shared cell-endpoint port', () => {
    const ports = stackPorts(0);
    const router = services.find((s) => s.container === ROUTER_TOPOLOGY)?.config ?? {};
    expect(router).toMatchObject({
      routing: 'topology',
      topologyServiceAddress: `${TOPOLOGY_SERVICE}:${ports.topologyGrpc}`,
      topologyServiceUrl: `http://${TOPOLOGY_SERVICE}:${ports.topologyHttp}`,
      cellEndpointScheme: 'http',
      cellEndpointPort: ports.shell,
    });
    expect((router.cells as Array<{ url: string }>).map((c) => c.url)).toEqual(
      demoWorld().cells.map((c) => `http://${composeServiceName('bridge', c)}:${ports.shell}`),
    );
    // what proxy.address answers is the host the router keeps: the bridge container's name
    expect(topologyService.config.cells).toEqual(
      demoWorld().cells.map((c) => expect.objectContaining({ address: composeServiceName('bridge', c) })),
    );
    for (const cell of demoWorld().cells) {
      const bridge = services.find((s) => s.container === composeServiceName('bridge', cell));
      expect(bridge?.config.shellListen, cell.name).toBe(`0.0.0.0:${ports.shell}`);
    }
    expect(compose.services[ROUTER_TOPOLOGY]?.depends_on).toEqual({
      init: { condition: 'service_completed_successfully' },
      [TOPOLOGY_SERVICE]: { condition: 'service_healthy' },
      ...Object.fromEntries(
        demoWorld().cells.map((c) => [composeServiceName('bridge', c), { condition: 'service_healthy' }]),
      ),
    });
  });

  it('runs cell_us0’s Geo secondary: replicas on a volume of its own, Rails with geoSite, a site router reaching its bridge', () => {
    const ports = stackPorts(0).geo(usGeo.id);
    const config = (kind: 'gitaly' | 'rails' | 'bridge' | 'router') =>
      services.find((s) => s.container === geoServiceName(kind, usGeo))?.config ?? {};
    expect(config('rails')).toMatchObject({
      geoSite: `${usGeo.name}-geo`,
      listen: [{ cell: usGeo.name, address: `0.0.0.0:${ports.rails}` }],
    });
    expect(config('gitaly').gitlabUrl).toBe(`http://${geoServiceName('rails', usGeo)}:${ports.rails}`);
    expect(config('bridge').railsUrl).toBe(`http://${geoServiceName('rails', usGeo)}:${ports.rails}`);
    expect(config('router')).toMatchObject({
      routing: 'site',
      sshListen: `0.0.0.0:${ports.ssh}`,
      cells: [expect.objectContaining({ url: `http://${geoServiceName('bridge', usGeo)}:${ports.bridge}` })],
    });
    // no address of the local plan is left
    expect(JSON.stringify(services.map((s) => s.config))).not.toContain('127.0.0.1');
    const volume = `repositories-us0-geo:${geoVolumeMount(paths, usGeo)}`;
    expect(compose.volumes).toHaveProperty('repositories-us0-geo');
    for (const name of ['init', geoServiceName('gitaly', usGeo), geoServiceName('rails', usGeo)]) {
      expect(compose.services[name]?.volumes, name).toContain(volume);
    }
    expect(compose.services[geoServiceName('bridge', usGeo)]?.depends_on).toEqual({
      init: { condition: 'service_completed_successfully' },
      [geoServiceName('rails', usGeo)]: { condition: 'service_healthy' },
      [geoServiceName('gitaly', usGeo)]: { condition: 'service_healthy' },
    });
    // the site router proxies pushes to the primary's bridge: both must be up
    expect(compose.services[geoServiceName('router', usGeo)]?.depends_on).toEqual({
      init: { condition: 'service_completed_successfully' },
      [geoServiceName('bridge', usGeo)]: { condition: 'service_healthy' },
      [composeServiceName('bridge', usGeo)]: { condition: 'service_healthy' },
    });
  });

  it('takes the world from STACK_TOPOLOGY, by default the image’s topologies/demo.json', () => {
    expect(compose.services.init?.environment?.STACK_TOPOLOGY).toMatch(
      /^\$\{STACK_TOPOLOGY:-\/app\/topologies\/demo\.json\}$/,
    );
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('WORKDIR /app');
    expect(dockerfile).toContain('COPY --from=build /app/topologies topologies');
    expect(dockerfile).toContain('COPY --from=build /app/schemas schemas');
  });

  it.each(expectedContainers().map((e) => [e.name] as const))(
    '%s: restart policy, own network, healthcheck, started after init',
    (name) => {
      const svc = compose.services[name] as ComposeService;
      expect(svc.restart).toBe('unless-stopped');
      expect(svc.networks).toEqual(['cells']);
      expect(svc.user).toBeUndefined(); // the image's non-root user
      expect(svc.healthcheck?.test).toEqual(['CMD', 'node', 'dist/stack/compose-health.js']);
      expect(svc.depends_on?.init).toEqual({ condition: 'service_completed_successfully' });
    },
  );

  it('runs the Topology Service on its default ports, before the mock cells that register claims with it', () => {
    const ports = stackPorts(0);
    expect(topologyService.config.grpcListen).toBe(`0.0.0.0:${ports.topologyGrpc}`);
    expect(topologyService.config.httpListen).toBe(`0.0.0.0:${ports.topologyHttp}`);
    expect(topologyService.grpc).toBe(`${TOPOLOGY_SERVICE}:${ports.topologyGrpc}`);
    expect(compose.services[TOPOLOGY_SERVICE]?.depends_on).toEqual({
      init: { condition: 'service_completed_successfully' },
    });
    for (const cell of demoWorld().cells) {
      expect(compose.services[composeServiceName('rails', cell)]?.depends_on).toEqual({
        init: { condition: 'service_completed_successfully' },
        [TOPOLOGY_SERVICE]: { condition: 'service_healthy' },
      });
    }
    // the router stays in `learn` mode: it needs no Topology Service
    expect(compose.services.router?.depends_on).not.toHaveProperty(TOPOLOGY_SERVICE);
  });

  it('starts each bridge after its cell’s Rails and Gitaly are healthy, the router after every bridge', () => {
    for (const cell of demoWorld().cells) {
      const bridge = compose.services[composeServiceName('bridge', cell)];
      expect(bridge?.depends_on).toEqual({
        init: { condition: 'service_completed_successfully' },
        [composeServiceName('rails', cell)]: { condition: 'service_healthy' },
        [composeServiceName('gitaly', cell)]: { condition: 'service_healthy' },
      });
    }
    expect(compose.services.router?.depends_on).toEqual({
      init: { condition: 'service_completed_successfully' },
      ...Object.fromEntries(
        demoWorld().cells.map((c) => [composeServiceName('bridge', c), { condition: 'service_healthy' }]),
      ),
    });
    expect(compose.services.client?.depends_on).toEqual({ router: { condition: 'service_healthy' } });
  });

  it('gives each cell’s Gitaly (and its Rails, for quarantined objects) that cell’s repositories volume', () => {
    const mounted = (svc: ComposeService | undefined) => svc?.volumes ?? [];
    for (const cell of demoWorld().cells) {
      const volume = `repositories-${cell.name.replace(/^cell_/, '')}`;
      const at = dirname(paths.storage(cell.name)); // the storage and the Gitaly runtime folder
      expect(compose.volumes).toHaveProperty(volume);
      expect(mounted(compose.services.init)).toContain(`${volume}:${at}`);
      expect(mounted(compose.services[composeServiceName('gitaly', cell)])).toContain(`${volume}:${at}`);
      expect(mounted(compose.services[composeServiceName('rails', cell)])).toContain(`${volume}:${at}`);
      expect(
        mounted(compose.services[composeServiceName('bridge', cell)]).some((v) => v.startsWith(volume)),
      ).toBe(false);
    }
    // secrets: written by init only, read-only everywhere else
    for (const [name, svc] of Object.entries(compose.services)) {
      const secrets = mounted(svc).filter((v) => v.startsWith('secrets:'));
      if (name === 'init') expect(secrets).toEqual([`secrets:${paths.secretsDir}`]);
      else if (name !== 'client') expect(secrets, name).toEqual([`secrets:${paths.secretsDir}:ro`]);
    }
    expect(Object.keys(compose.networks)).toEqual(['cells']);
  });

  it('runs the client scenario (a file of this repository) as the image’s user', () => {
    const client = compose.services.client as ComposeService;
    expect(client.command).toEqual(['sh', '/scenario/client-scenario.sh', 'all']);
    const script = client.volumes?.find((v) => v.endsWith(':/scenario/client-scenario.sh:ro'));
    expect(script).toBeDefined();
    expect(existsSync(join(root, (script as string).split(':')[0] as string))).toBe(true);
    expect(client.environment?.ROUTER_SSH).toBe(`${COMPOSE_NET.host('router')}:${stackPorts(0).routerSsh}`);
    expect(client.restart).toBe('no');
  });

  it('wires the gitlab profile’s Gitaly to the same storage, secrets and port as the cell’s mock Gitaly', () => {
    const real = compose.services['gitaly-gitlab'] as ComposeService;
    const mock = compose.services[composeServiceName('gitaly', GITLAB_GITALY_CELL)] as ComposeService;
    expect(real.volumes).toEqual(mock.volumes);
    expect(real.expose).toEqual(mock.expose);
    expect(real.command).toEqual(['/data/config/gitaly-gitlab.toml']);
    expect(compose.services.init?.environment).toHaveProperty('COMPOSE_GITALY_CELL_EU1');
  });

  it('is accepted by docker compose when a container engine answers', async (ctx) => {
    const info = await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 15_000 }).catch(
      () => undefined,
    );
    const plugin = await run('docker', ['compose', 'version'], { timeoutMs: 15_000 }).catch(() => undefined);
    if (info?.code !== 0 || plugin?.code !== 0) {
      ctx.skip(
        info?.code !== 0
          ? 'no container engine answers `docker info` on this machine; compose.yaml was checked statically only'
          : 'the docker CLI has no compose plugin here; compose.yaml was checked statically (and is run by test/containers/)',
      );
      return;
    }
    const r = await run('docker', ['compose', '-f', join(root, 'compose.yaml'), 'config', '--quiet'], {
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('stack/compose-init.ts', () => {
  let dir: string;
  let written: string[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compose-init-'));
    written = await composeInit(dir, { COMPOSE_GITALY_CELL_EU1: 'gitaly-gitlab' });
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every config compose.yaml names, known_hosts for the client and the host, and the real Gitaly’s', async () => {
    const p = stackPaths(dir);
    for (const svc of Object.values(compose.services)) {
      const command = svc.command ?? [];
      const at = command.indexOf('--config');
      if (at >= 0) expect(written).toContain(String(command[at + 1]).replace('/data', p.root));
    }
    const hostKey = (await readFile(`${p.hostKey}.pub`, 'utf8')).split(' ').slice(0, 2).join(' ');
    expect(await readFile(`${p.root}/known_hosts`, 'utf8')).toBe(
      [
        ['router', 2222],
        [ROUTER_TOPOLOGY, 2223],
        [geoServiceName('router', usGeo), 2224],
      ]
        .map(([host, port]) => `[${host}]:${port} ${hostKey}\n[127.0.0.1]:${port} ${hostKey}\n`)
        .join(''),
    );
    const toml = `${p.configDir}/gitaly-gitlab.toml`;
    expect(((await stat(toml)).mode & 0o777).toString(8)).toBe('600');
    const text = await readFile(toml, 'utf8');
    expect(text).toContain(`token = "${(await readFile(p.gitalyToken, 'utf8')).trim()}"`);
    expect(text).toContain(`path = "${p.storage(GITLAB_GITALY_CELL.name)}"`);
    expect(text).toContain(`listen_addr = "0.0.0.0:${stackPorts(0).gitaly(GITLAB_GITALY_CELL.id)}"`);
  });

  it('writes the Topology Service’s config (every demo cell, at its bridge’s host) and points each mock cell at it', async () => {
    const p = stackPaths(dir);
    const ts = JSON.parse(await readFile(`${p.configDir}/topology-service.json`, 'utf8')) as {
      grpcListen: string;
      httpListen: string;
      cells: Array<{ id: number; name: string; address: string; sessionPrefix: string }>;
    };
    expect(ts.grpcListen).toBe('0.0.0.0:9095');
    expect(ts.httpListen).toBe('0.0.0.0:9096');
    expect(ts.cells).toEqual(
      demoWorld().cells.map((c) => ({
        id: c.id,
        name: c.name,
        address: composeServiceName('bridge', c),
        sessionPrefix: `cell-${c.id}`,
      })),
    );
    for (const cell of demoWorld().cells) {
      const config = JSON.parse(await readFile(`${p.configDir}/mock-cell-${cell.name}.json`, 'utf8')) as {
        topologyService?: string;
        listen: Array<{ cell: string }>;
      };
      expect(config.topologyService, cell.name).toBe('topology-service:9095');
      expect(config.listen.map((l) => l.cell)).toEqual([cell.name]);
    }
  });

  it('writes the Geo sites as the containers reach each other, the node keys, and a replica of every primary project', async () => {
    const p = stackPaths(dir);
    const topology = JSON.parse(await readFile(p.topology, 'utf8')) as Topology;
    const site = `${usGeo.name}-geo`;
    expect(topology.geoSites?.map((g) => [g.name, g.role, g.url, g.ssh])).toEqual([
      [usGeo.name, 'primary', 'http://bridge-us0:4001', 'router:2222'],
      [site, 'secondary', 'http://bridge-us0-geo:4011', 'router-us0-geo:2224'],
    ]);
    const secondary = topology.geoSites?.[1];
    expect(secondary?.gitaly?.address).toBe('tcp://gitaly-us0-geo:9011');
    const storage = `${p.root}/geo/${site}/repositories`;
    expect(secondary?.gitaly?.storages.default).toBe(storage);
    for (const g of topology.geoSites ?? []) expect(existsSync(g.secretAccessKeyFile), g.name).toBe(true);
    const primaryStorage = p.storage(usGeo.name);
    const primaryRepos = Object.values(repositoryDirs(topology)).filter((d) => d.startsWith(primaryStorage));
    expect(primaryRepos.length).toBeGreaterThan(0);
    for (const repo of primaryRepos) {
      const replica = `${storage}${repo.slice(primaryStorage.length)}`;
      const [a, b] = await Promise.all(
        [repo, replica].map((d) => run('git', ['--git-dir', d, 'rev-parse', 'refs/heads/main'])),
      );
      expect(b?.stdout.trim(), replica).toBe(a?.stdout.trim());
    }
  });

  it('writes the world of the topology file STACK_TOPOLOGY names; a bad file fails with its problems', async () => {
    const other = await mkdtemp(join(tmpdir(), 'compose-init-own-'));
    try {
      const demo = JSON.parse(readFileSync(DEMO_TOPOLOGY_FILE, 'utf8')) as Record<string, unknown> & {
        projects: Array<{ path: string; visibility: string }>;
      };
      delete demo.$schema;
      demo.projects.push({ path: 'my-company/from-my-file', visibility: 'public' });
      const file = join(other, 'my-world.json');
      await writeFile(file, JSON.stringify(demo));
      await composeInit(join(other, 'data'), { STACK_TOPOLOGY: file });
      const topology = JSON.parse(
        await readFile(stackPaths(join(other, 'data')).topology, 'utf8'),
      ) as Topology;
      expect(topology.projects.map((x) => `${x.namespace}/${x.path}`)).toContain('my-company/from-my-file');
      await writeFile(file, JSON.stringify({ ...demo, cells: [] }));
      await expect(composeInit(join(other, 'bad'), { STACK_TOPOLOGY: file })).rejects.toThrow(/problem/);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  }, 120_000);

  it('points a cell at another Gitaly container with COMPOSE_GITALY_<CELL>, and only that cell', async () => {
    const topology = JSON.parse(await readFile(stackPaths(dir).topology, 'utf8')) as Topology;
    const addresses = Object.fromEntries(topology.cells.map((c) => [c.name, c.gitaly.address]));
    expect(addresses).toEqual({
      cell_us0: 'tcp://gitaly-us0:9001',
      cell_us1: 'tcp://gitaly-us1:9002',
      cell_eu0: 'tcp://gitaly-eu0:9003',
      cell_eu1: 'tcp://gitaly-gitlab:9004',
    });
  });

  it('health: probes every address of each service’s config', () => {
    const byService = Object.fromEntries(planned.map((p) => [p.spec.service, p.config]));
    expect(
      healthProbes('router', byService.router as Record<string, unknown>).map((x) => `${x.kind}:${x.port}`),
    ).toEqual(['ssh:2222', 'http:8080', 'http:8081']);
    expect(healthProbes('bridge', planned.find((p) => p.spec.service === 'bridge')?.config ?? {})).toEqual([
      { kind: 'tcp', port: 4001 },
      { kind: 'http', port: 4101, path: '/readiness' },
    ]);
    expect(healthProbes('mock-gitaly', planned[0]?.config ?? {})).toEqual([{ kind: 'tcp', port: 9001 }]);
    expect(healthProbes('mock-cell', byService['mock-cell'] as Record<string, unknown>)).toHaveLength(4);
    expect(healthProbes('topology-service', topologyService.config)).toEqual([
      { kind: 'tcp', port: 9095 },
      { kind: 'http', port: 9096, path: '/readiness' },
    ]);
    expect(healthProbes('something-else', {})).toEqual([]);
  });
});

describe('stack/compose-file.ts', () => {
  const generated = composeFileFor(demoWorld(), '/host/my-world.json') as {
    services: Record<string, ComposeService & Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const sorted = (list: string[] | undefined) => [...(list ?? [])].sort();

  it('generates compose.yaml’s services for the demo (but the client and the gitlab profile)', () => {
    const names = Object.keys(compose.services).filter((n) => n !== 'client' && n !== 'gitaly-gitlab');
    expect(Object.keys(generated.services).sort()).toEqual(names.sort());
    expect(Object.keys(generated.volumes).sort()).toEqual(Object.keys(compose.volumes).sort());
    for (const name of names) {
      const want = compose.services[name] as ComposeService;
      const got = generated.services[name] as ComposeService;
      expect(got.command, name).toEqual(want.command);
      expect(got.depends_on, name).toEqual(want.depends_on);
      expect(got.ports, name).toEqual(want.ports);
      expect(sorted(got.expose), name).toEqual(sorted(want.expose));
      expect(got.healthcheck, name).toEqual(want.healthcheck);
      const volumes = sorted(got.volumes).filter((v) => !v.endsWith(':/world/topology.json:ro'));
      expect(volumes, name).toEqual(sorted(want.volumes));
    }
    expect(generated.services.init?.volumes).toContain('/host/my-world.json:/world/topology.json:ro');
    expect(generated.services.init?.environment?.STACK_TOPOLOGY).toBe('/world/topology.json');
  });

  it('generates a world of other cell names whose every config the init writes from that file', async () => {
    const other = await mkdtemp(join(tmpdir(), 'compose-file-'));
    try {
      const names: Record<string, string> = {
        cell_us0: 'cell_ams',
        cell_us1: 'cell_fra',
        cell_eu0: 'cell_tok',
        cell_eu1: 'cell_syd',
      };
      const text = readFileSync(DEMO_TOPOLOGY_FILE, 'utf8')
        .replace(/cell_(us0|us1|eu0|eu1)/g, (m) => names[m] as string)
        .replace('"$schema": "../schemas/topology.schema.json",', '');
      const file = join(other, 'world.json');
      await writeFile(file, text);
      const world = loadTopologyFile(file);
      const own = composeFileFor(world, file) as { services: Record<string, ComposeService> };
      expect(Object.keys(own.services)).toEqual(
        expect.arrayContaining(['cell-ams', 'bridge-tok', 'gitaly-syd', 'router-ams-geo', 'cell-ams-geo']),
      );
      expect(JSON.stringify(own)).not.toMatch(/us0|eu1/);
      const written = await composeInit(join(other, 'data'), { STACK_TOPOLOGY: file });
      for (const [name, svc] of Object.entries(own.services)) {
        const at = svc.command?.indexOf('--config') ?? -1;
        if (at < 0) continue;
        const config = String(svc.command?.[at + 1]).replace('/data', join(other, 'data'));
        expect(written, name).toContain(config);
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  }, 120_000);
});
