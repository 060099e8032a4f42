import { describe, expect, it } from 'vitest';
import type { TopologyFile } from '../../lib/contracts/topology-file.js';
import { validateTopology } from '../../mock-cell/topology-validate.js';
import { pickFreePorts } from '../../stack/free-ports.js';
import { LOCAL_NET, stackPaths, stackPorts } from '../../stack/layout.js';
import { upBanner } from '../../stack/stack-banner.js';
import { planServices, stackJson } from '../../stack/stack-config.js';
import { worldPorts } from '../../stack/stack-prepare.js';
import { stackSettings } from '../../stack/stack-settings.js';
import { worldTopology } from '../../stack/topology-file-convert.js';
import { demoWorld, TopologyFileError } from '../../stack/topology-file-load.js';
import { resolveTopologyFile, type World } from '../../stack/topology-file-resolve.js';

/** A world of `n` cells, one organization, group and project per cell, Geo on the first. */
function cells(n: number, geo = true): World {
  const names = Array.from({ length: n }, (_, i) => `c${i}`);
  const file: TopologyFile = {
    version: 1,
    cells: names.map((name, i) => ({ name, region: i % 2 ? 'b' : 'a', legacy: i === 0 })),
    organizations: names.map((name) => ({ path: `org-${name}`, cell: name })),
    namespaces: names.map((name) => ({ path: `g-${name}`, kind: 'group', organization: `org-${name}` })),
    projects: names.map((name) => ({ path: `g-${name}/p` })),
    users: [{ username: 'u', defaultOrganization: 'org-c0' }],
    ...(geo ? { geo: [{ cell: 'c0' }] } : {}),
  };
  return resolveTopologyFile(file, '/w.json', '/');
}

const paths = stackPaths('/data');

describe('a world of any number of cells', () => {
  it('plans 10 cells on free ports: every port distinct, a shell address per cell, controls per service', async () => {
    const world = cells(10);
    const ports = await pickFreePorts(
      world.cells.map((c) => c.id),
      [1],
    );
    const planned = planServices(world, paths, ports, LOCAL_NET, 'info', { topology: true, geo: true });
    const addresses = planned.flatMap((p) => p.spec.listen.map((l) => l.address));
    expect(new Set(addresses).size).toBe(addresses.length);
    const shell = planned.flatMap((p) => p.spec.listen.filter((l) => l.what.startsWith('shell endpoint')));
    expect(shell.map((l) => l.address.split(':')[0])).toEqual(world.cells.map((c) => `127.0.0.${c.id + 1}`));
    const names = planned.map((p) => p.spec.name);
    expect(names.filter((n) => n.startsWith('gitaly-c'))).toHaveLength(11); // 10 cells + the Geo site
    expect(names).not.toContain('router'); // no learn router without seed000Routing
    expect(names).toContain('router-topology');
    const controls = Object.fromEntries(planned.map((p) => [p.spec.name, p.spec.controls]));
    expect(controls['gitaly-c3']).toEqual([{ target: 'gitaly', cell: 'c3' }]);
    expect(controls['bridge-c9']).toEqual([{ target: 'bridge', cell: 'c9' }]);
    expect(controls['topology-service']).toEqual([{ target: 'topology-service' }]);
    expect(controls['mock-cell']).toEqual(world.cells.map((c) => ({ target: 'rails', cell: c.name })));
    const topology = worldTopology(
      world,
      ports,
      paths,
      { u: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB' },
      LOCAL_NET,
    );
    expect(() => validateTopology(topology)).not.toThrow();
    const json = stackJson(
      world,
      paths,
      ports,
      topology,
      Object.fromEntries(world.projects.map((p) => [`${p.namespace}/${p.path}`, '/r'])),
    );
    expect(json.router).toEqual(json.routerTopology);
    expect(json.cells).toHaveLength(10);
  });

  it('keeps the default ports per cell id with --port-offset, and asks for --free-ports when they clash', async () => {
    const settings = stackSettings([], {});
    const ports = await worldPorts(cells(4), settings, true);
    expect([ports.rails(4), ports.bridge(4), ports.gitaly(4), ports.geo(1).ssh]).toEqual([
      3004, 4004, 9004, 2224,
    ]);
    await expect(worldPorts(cells(11), settings, true)).rejects.toThrow(TopologyFileError);
    await expect(worldPorts(cells(11), settings, true)).rejects.toThrow(
      /share port 3011; start with --free-ports/,
    );
    await expect(worldPorts(cells(11, false), settings, false)).resolves.toBeDefined();
  });

  it('takes flags over STACK_* settings', () => {
    const s = stackSettings(['--data-dir', '/x', '--free-ports', '--geo', 'off'], {
      STACK_DATA_DIR: '/y',
      STACK_PORT_OFFSET: '300',
    });
    expect(s).toMatchObject({ dataDir: '/x', freePorts: true, portOffset: 0, geo: 'off' });
    expect(stackSettings(['--port-offset', '200'], { STACK_FREE_PORTS: 'true' })).toMatchObject({
      portOffset: 200,
      freePorts: false,
    });
    expect(() => stackSettings([], { STACK_FREE_PORTS: 'true', STACK_PORT_OFFSET: '5' })).toThrow(
      /exclude each other/,
    );
  });

  it("passes a cell's Gitaly concurrency limits to its mock Gitaly only (maxQueueWaitMs filled in)", () => {
    const world = cells(2, false);
    const limit = {
      rpc: '/gitaly.SSHService/SSHUploadPackWithSidechannel' as const,
      maxPerRepo: 1,
      maxQueueSize: 3,
    };
    Object.assign(world.cells[1] ?? {}, { gitalyConcurrency: [{ ...limit, maxQueueWaitMs: 0 }] });
    const planned = planServices(world, paths, stackPorts(0), LOCAL_NET, 'info');
    const config = (name: string) => planned.find((p) => p.spec.name === name)?.config ?? {};
    expect(config('gitaly-c1').concurrency).toEqual([{ ...limit, maxQueueWaitMs: 0 }]);
    expect('concurrency' in config('gitaly-c0')).toBe(false);
  });
});

describe('the demo world', () => {
  it('prints the banner it always printed', () => {
    const demo = demoWorld();
    const ports = stackPorts(0);
    const text = upBanner(demo, stackPaths('/v'), ports, true);
    expect(text.split('\n')).toEqual([
      '',
      'GitLab Cells demo stack is up. Data: /v  Logs: /v/logs',
      'Router SSH 127.0.0.1:2222, HTTP http://127.0.0.1:8080; stack.json: /v/stack.json',
      'Topology router SSH 127.0.0.1:2223, HTTP http://127.0.0.1:8082; Topology Service gRPC 127.0.0.1:9095, REST http://127.0.0.1:9096',
      'Geo secondary of cell_us0 (cell_us0-geo): SSH 127.0.0.1:2224 (pushes go on to the primary)',
      'gitlab-shell config for this stack: /v/gitlab-shell-config.yml',
      '',
      'Clone as alice (Developer in my-company/my-project, served by cell_eu0):',
      '  export GIT_SSH_COMMAND="ssh -i /v/keys/alice -o IdentitiesOnly=yes -o UserKnownHostsFile=/v/known_hosts"',
      '  git clone ssh://git@127.0.0.1:2222/my-company/my-project.git',
      'or over HTTP (Basic auth with the password of the topology file):',
      '  git clone http://alice:alice-password@127.0.0.1:8080/my-company/my-project.git',
      '',
      'Other users: root, alice, bob, carol, dave, john.doe (keys in /v/keys).',
      'Press Ctrl-C to stop.',
      '',
    ]);
  });
});
