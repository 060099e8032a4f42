/**
 * @file The proxy program under the edge service: its config tested, then started in the foreground,
 * ready once the proxy process itself holds a listening socket on every address (read from /proc, so
 * a port some other process holds never passes for it), stopped with SIGTERM then SIGKILL.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { EdgeProxy } from '../lib/contracts/edge-file.js';
import { NGINX, nginxArgs } from './nginx-files.js';

export const HAPROXY = '/usr/sbin/haproxy';

/** The binary and its arguments (`test`: only check the config). */
export function proxyCommand(
  proxy: EdgeProxy,
  dir: string,
  config: string,
  test = false,
): [string, string[]] {
  if (proxy === 'nginx') return [NGINX, nginxArgs(dir, config, test)];
  return [HAPROXY, test ? ['-c', '-q', '-f', config] : ['-db', '-f', config]];
}

/** Socket inodes of every file descriptor of `pid`. */
function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) out.add(m[1]);
    }
  } catch {
    // gone, or not ours to read
  }
  return out;
}

/** `127.0.0.2:4443` → `0200007F:115B` (the local address of /proc/net/tcp, little-endian IPv4). */
function procAddress(address: string): string {
  const [host = '', port = '0'] = address.split(':');
  const ip = host
    .split('.')
    .reverse()
    .map((b) => Number(b).toString(16).padStart(2, '0'))
    .join('');
  return `${ip}:${Number(port).toString(16).padStart(4, '0')}`.toUpperCase();
}

/** The addresses of `wanted` that process `pid` listens on (TCP, state LISTEN). */
export function listeningOn(pid: number, wanted: readonly string[]): string[] {
  const inodes = socketInodes(pid);
  const lines = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1);
  const held = new Set<string>();
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    if (f[3] === '0A' && f[9] !== undefined && inodes.has(f[9])) held.add(f[1] ?? '');
  }
  return wanted.filter((a) => held.has(procAddress(a)));
}

/** The config checked by the proxy itself; throws with its own message. */
export function testProxyConfig(proxy: EdgeProxy, dir: string, config: string): void {
  const [bin, args] = proxyCommand(proxy, dir, config, true);
  if (!existsSync(bin)) throw new Error(`${bin} is missing: apt-get install -y ${proxy}`);
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0)
    throw new Error(
      `${proxy} refuses its config ${config}: ${`${r.stderr}${r.stdout}`.trim() || r.error?.message}`,
    );
}

/** The last lines of the proxy's own error log (nginx), for messages. */
export function errorLogTail(dir: string): string {
  const file = join(dir, 'error.log');
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trim().split('\n').slice(-10).join('\n');
}

export interface ProxyProcess {
  child: ChildProcess;
  /** Resolves once the proxy listens on every address; rejects when it exits first or after `timeoutMs`. */
  ready(timeoutMs: number): Promise<void>;
  stop(graceMs?: number): Promise<void>;
}

export function startProxy(
  proxy: EdgeProxy,
  dir: string,
  config: string,
  listen: readonly string[],
): ProxyProcess {
  const [bin, args] = proxyCommand(proxy, dir, config);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    ready: async (timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (!alive()) throw new Error(`${proxy} exited (code ${child.exitCode}) before it was listening`);
        const pid = child.pid ?? 0;
        if (listeningOn(pid, listen).length === listen.length) return;
        if (Date.now() > deadline)
          throw new Error(`${proxy} did not listen on ${listen.join(', ')} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async (graceMs = 5_000) => {
      if (!alive()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
