import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../lib/proto.js';
import type { CellConfig } from '../config.js';

/**
 * One more real router process (`node dist/router/main.js`) in front of cells that already run,
 * e.g. a demo stack's bridges: a router of another region, one with a short cache lifetime, or
 * one whose region's cell is down. Every listener on port 0; addresses from its `listening` line.
 */
export interface SpawnedRouter {
  /** `http://127.0.0.1:<port>` of the HTTP front. */
  http: string;
  sshPort: number;
  /** A known_hosts file with this router's host key. */
  knownHosts: string;
  /** The router's Prometheus counters (`gitlab_cells_router_*_total`). */
  counters(): Promise<Record<string, number>>;
  /** What the process wrote so far (pino JSON lines, stderr). */
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnRouterOptions {
  /** Folder for the config file and host key (the caller removes it). */
  dir: string;
  name: string;
  shellSecretFile: string;
  region: string;
  cells: readonly CellConfig[];
  /** More router settings (`learnCacheMaxTtlMs`, `rulesFile`, …). */
  settings?: Record<string, unknown>;
  timeoutMs?: number;
}

/**
 * Sample lines of a Prometheus text exposition → values by series, the key as written
 * (`name` or `name{label="v",…}`).
 */
export function parsePrometheusCounters(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) ([0-9.eE+-]+|NaN)$/.exec(line.trim());
    if (m) out[m[1] as string] = Number(m[2]);
  }
  return out;
}

export async function fetchCounters(url: string): Promise<Record<string, number>> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return parsePrometheusCounters(await res.text());
}

/** Whether `child` has exited, or does within `ms`. */
export function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

interface ListeningLine {
  msg?: string;
  ssh?: string;
  http?: string;
  metrics?: string;
}

export async function spawnRouter(opts: SpawnRouterOptions): Promise<SpawnedRouter> {
  const home = join(opts.dir, opts.name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const hostKeyFile = join(home, 'ssh_host_ed25519_key');
  const configFile = join(home, 'router.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      sshListen: '127.0.0.1:0',
      httpListen: '127.0.0.1:0',
      metricsListen: '127.0.0.1:0',
      hostKeyFile,
      shellSecretFile: opts.shellSecretFile,
      region: opts.region,
      cells: opts.cells,
      logLevel: 'info',
      ...opts.settings,
    }),
  );
  const child = spawn(
    process.execPath,
    [join(projectRoot(), 'dist', 'router', 'main.js'), '--config', configFile],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home } },
  );
  const chunks: string[] = [];
  child.stderr?.on('data', (c: Buffer) => chunks.push(c.toString()));
  const listening = await new Promise<ListeningLine>((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => fail('did not log "listening" in time'), opts.timeoutMs ?? 60_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`router ${opts.name} ${why}:\n${chunks.join('')}`));
    }
    child.once('exit', (code) => fail(`exited with ${code}`));
    child.stdout?.on('data', (c: Buffer) => {
      const text = c.toString();
      chunks.push(text);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        let entry: ListeningLine;
        try {
          entry = JSON.parse(line) as ListeningLine;
        } catch {
          continue;
        }
        if (entry.msg === 'listening') {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          resolve(entry);
        }
      }
    });
  });
  const sshPort = Number(listening.ssh?.split(':').at(-1));
  const knownHosts = join(home, 'known_hosts');
  const publicKey = readFileSync(`${hostKeyFile}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  writeFileSync(knownHosts, `[127.0.0.1]:${sshPort} ${publicKey}\n`);
  const metricsUrl = `http://${listening.metrics}/metrics`;
  return {
    http: `http://${listening.http}`,
    sshPort,
    knownHosts,
    counters: () => fetchCounters(metricsUrl),
    output: () => chunks.join(''),
    async stop() {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 15_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    },
  };
}
