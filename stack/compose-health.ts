import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';

/*
 * The containers' healthcheck (Dockerfile HEALTHCHECK, compose.yaml `healthcheck`), run by the engine
 * every few seconds in every container: node built-ins only, so that it starts fast on a loaded
 * machine (the compose init's module graph, topology files and schemas included, is not loaded).
 */

/** One check of a container's health: a TCP connect, or an HTTP GET that must answer below 500. */
export interface HealthProbe {
  kind: 'tcp' | 'http' | 'ssh';
  port: number;
  path?: string;
}

function portOf(address: unknown): number {
  const s = String(address);
  return Number(s.slice(s.lastIndexOf(':') + 1));
}

/** What `health` checks for a service, from its config file (the addresses it binds). */
export function healthProbes(service: string, config: Record<string, unknown>): HealthProbe[] {
  switch (service) {
    case 'router':
      return [
        { kind: 'ssh', port: portOf(config.sshListen) },
        // the router answers /api/v4/internal/… itself (404), without asking a cell
        { kind: 'http', port: portOf(config.httpListen), path: '/api/v4/internal/health' },
        ...(config.metricsListen
          ? [{ kind: 'http' as const, port: portOf(config.metricsListen), path: '/metrics' }]
          : []),
      ];
    case 'bridge':
      return [
        { kind: 'tcp', port: portOf(config.listen) },
        // the cell-endpoint port the topology router reaches it on
        ...(config.shellListen ? [{ kind: 'tcp' as const, port: portOf(config.shellListen) }] : []),
        ...(config.metricsListen
          ? [{ kind: 'http' as const, port: portOf(config.metricsListen), path: '/readiness' }]
          : []),
      ];
    case 'mock-cell':
      return (config.listen as Array<{ address: string }>).map((l) => ({
        kind: 'http' as const,
        port: portOf(l.address),
        path: '/api/v4/internal/check',
      }));
    case 'mock-gitaly':
      return [{ kind: 'tcp', port: portOf(config.listen) }];
    case 'topology-service':
      return [
        { kind: 'tcp', port: portOf(config.grpcListen) },
        { kind: 'http', port: portOf(config.httpListen), path: '/readiness' },
      ];
    default:
      return [];
  }
}

function probe(p: HealthProbe, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`${p.kind} 127.0.0.1:${p.port}${p.path ?? ''}: ${why}`));
    if (p.kind === 'http') {
      const req = request({ host: '127.0.0.1', port: p.port, path: p.path, timeout: timeoutMs }, (res) => {
        res.resume();
        if ((res.statusCode ?? 500) < 500) resolve();
        else fail(`HTTP ${res.statusCode}`);
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => fail(err.message));
      req.end();
      return;
    }
    const socket = connect({ host: '127.0.0.1', port: p.port, timeout: timeoutMs });
    socket.on('timeout', () => socket.destroy(new Error('timed out')));
    socket.on('error', (err) => fail(err.message));
    if (p.kind === 'tcp') {
      socket.on('connect', () => {
        socket.destroy();
        resolve();
      });
      return;
    }
    // ssh: the server's identification line proves it serves SSH, not just that the port is bound
    socket.once('data', (chunk) => {
      socket.destroy();
      if (chunk.toString('latin1').startsWith('SSH-2.0-')) resolve();
      else fail('no SSH identification line');
    });
  });
}

/**
 * The containers' healthcheck (Dockerfile HEALTHCHECK, compose.yaml `healthcheck`): finds the
 * service this container runs (`node dist/<service>/main.js --config <file>`, pid 1) and checks every
 * address of its config from inside the container. A container running something else is healthy.
 */
export async function composeHealth(cmdline: string[], timeoutMs = 2_000): Promise<string> {
  const main = cmdline.find((a) => /^(?:\/app\/)?dist\/[^/]+\/main\.js$/.test(a));
  const configAt = cmdline.indexOf('--config');
  if (!main || configAt < 0 || !cmdline[configAt + 1]) return 'not a service container';
  const service = main.split('/').at(-2) as string;
  const config = JSON.parse(await readFile(cmdline[configAt + 1] as string, 'utf8')) as Record<
    string,
    unknown
  >;
  const probes = healthProbes(service, config);
  await Promise.all(probes.map((p) => probe(p, timeoutMs)));
  return `${service}: ${probes.map((p) => `${p.kind} ${p.port}`).join(', ')} answer`;
}

if (process.argv[1]?.endsWith('compose-health.js')) {
  readFile('/proc/1/cmdline', 'utf8')
    .then((raw) => composeHealth(raw.split('\0').filter(Boolean)))
    .then(
      (msg) => process.stdout.write(`healthy: ${msg}\n`),
      (err: unknown) => {
        process.stderr.write(`unhealthy: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
}
