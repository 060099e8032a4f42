import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../lib/proto.js';
import { COMPOSE_NET, composeServiceName, DEMO_CELLS, stackPaths, stackPorts } from '../../stack/layout.js';
import { planServices } from '../../stack/stack-config.js';
import { run } from '../helpers/run.js';

interface ComposeService {
  command?: string[];
  expose?: string[];
  ports?: string[];
  environment?: Record<string, string>;
}

const root = projectRoot();
const compose = parse(readFileSync(join(root, 'compose.yaml'), 'utf8')) as {
  services: Record<string, ComposeService>;
};
const planned = planServices(stackPaths('/data'), stackPorts(0), COMPOSE_NET, 'info');

function portOf(address: unknown): string {
  return String(address).split(':').pop() as string;
}

/** The container that runs one planned service (mock-cell is split per cell under compose). */
function expectedContainers() {
  const out: Array<{ name: string; main: string; config: string; ports: string[] }> = [];
  for (const p of planned) {
    const c = p.config;
    if (p.spec.service === 'mock-cell') {
      for (const cell of DEMO_CELLS) {
        const listen = (c.listen as Array<{ cell: string; address: string }>).find(
          (l) => l.cell === cell.name,
        );
        out.push({
          name: composeServiceName('rails', cell),
          main: 'dist/mock-cell/main.js',
          config: `/data/config/mock-cell-${cell.name}.json`,
          ports: [portOf(listen?.address)],
        });
      }
      continue;
    }
    const cell = DEMO_CELLS.find((d) => p.spec.name.endsWith(d.name));
    const kind =
      p.spec.service === 'mock-gitaly' ? 'gitaly' : p.spec.service === 'bridge' ? 'bridge' : 'router';
    const ports =
      kind === 'router'
        ? [portOf(c.sshListen), portOf(c.httpListen), portOf(c.metricsListen)]
        : kind === 'bridge'
          ? [portOf(c.listen), portOf(c.metricsListen)]
          : [portOf(c.listen)];
    out.push({
      name: composeServiceName(kind, cell),
      main: `dist/${p.spec.service}/main.js`,
      config: p.spec.configFile,
      ports,
    });
  }
  return out;
}

describe('compose.yaml', () => {
  it('has an init service that writes the configs, plus exactly the stack’s services', () => {
    const names = Object.keys(compose.services).sort();
    expect(names).toEqual(['init', ...expectedContainers().map((e) => e.name)].sort());
    expect(compose.services.init?.command?.join(' ')).toContain('dist/stack/compose-init.js');
  });

  it.each(expectedContainers().map((e) => [e.name, e] as const))(
    'runs %s with the code’s main, config and ports',
    (name, want) => {
      const svc = compose.services[name] as ComposeService;
      expect(svc.command).toEqual(['node', want.main, '--config', want.config]);
      const published = [
        ...(svc.expose ?? []),
        ...(svc.ports ?? []).map((p) => p.split(':').pop() as string),
      ];
      expect(new Set(published)).toEqual(new Set(want.ports));
    },
  );

  it('publishes the router on the default SSH and HTTP ports', () => {
    const ports = stackPorts(0);
    expect(compose.services.router?.ports).toEqual([
      `${ports.routerSsh}:${ports.routerSsh}`,
      `${ports.routerHttp}:${ports.routerHttp}`,
    ]);
  });

  it('is accepted by docker compose when a container engine answers', async (ctx) => {
    const info = await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 15_000 }).catch(
      () => undefined,
    );
    if (info?.code !== 0) {
      ctx.skip(
        'no container engine answers `docker info` on this machine; compose.yaml was checked statically only',
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
