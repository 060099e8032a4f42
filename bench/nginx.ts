import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeNginxTempDirs, NGINX, nginxArgs, nginxTempPaths, nginxUserLine } from '../edge/nginx-files.js';
import { forcedCommandGitCpu, freePort, waitForPort } from './openssh.js';
import {
  type CpuCounter,
  childPids,
  commandOutput,
  mustRun,
  processCpu,
  stopChild,
  track,
  waitExit,
} from './proc.js';

/**
 * Contender 4: nginx + fcgiwrap + `git http-backend` (Debian's packages), what an admin would run
 * for git over HTTP. The benchmark starts its own nginx on a loopback port with a generated config
 * and every path in the run folder (the system's nginx is never touched), and its own fcgiwrap on a
 * unix socket there. The project root holds one symlink per project to the very bare repository the
 * stack serves.
 */
export { NGINX };
export const FCGIWRAP = '/usr/sbin/fcgiwrap';
export const GIT_HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface NginxServer {
  pid: number;
  port: number;
  url(projectPath: string): string;
  /** `nginx`: master and workers; `fcgiwrap`: its processes (own); `fcgiwrap-git`: git http-backend and git under it. */
  serverCpu: { nginx: CpuCounter; fcgiwrap: CpuCounter; 'fcgiwrap-git': CpuCounter };
  /** fcgiwrap's preforked processes: they reap git http-backend, so a measurement waits for them. */
  reapers(): number[];
  stop(): Promise<void>;
}

export interface NginxConfigInput {
  /** Folder of the config: pid, logs and nginx's temp folders live under it. */
  dir: string;
  port: number;
  fcgiSocket: string;
  projectRoot: string;
  /** The CGI fcgiwrap runs: `backendWrapper`'s script around git http-backend. */
  script: string;
  /** Workers' user when nginx starts as root (nginx would otherwise switch them to `nobody`). */
  user: string | undefined;
  /** Connections per worker: at least two per concurrent clone, with headroom. */
  workerConnections: number;
}

/** The generated nginx.conf: loopback only, git's three smart HTTP routes to `git http-backend`. */
export function nginxConfig(o: NginxConfigInput): string {
  return `# The benchmark's own nginx (not the system's): loopback only, git http-backend through fcgiwrap.
${o.user ? `user ${o.user};\n` : ''}daemon off;
master_process on;
worker_processes 2;
pid ${join(o.dir, 'nginx.pid')};
error_log ${join(o.dir, 'error.log')} warn;
# 500 concurrent clones hold a client and an fcgiwrap connection each.
worker_rlimit_nofile ${2 * o.workerConnections + 64};
events { worker_connections ${o.workerConnections}; }
http {
  access_log off;
${nginxTempPaths(o.dir)}
  # Pushes of any size; git's pack streamed back as git http-backend writes it.
  client_max_body_size 0;
  fastcgi_buffering off;
  fastcgi_read_timeout 900s;
  server {
    listen 127.0.0.1:${o.port};
    location ~ ^/.+\\.git/(info/refs|git-upload-pack|git-receive-pack)$ {
      fastcgi_pass unix:${o.fcgiSocket};
      fastcgi_param SCRIPT_FILENAME ${o.script};
      fastcgi_param GIT_PROJECT_ROOT ${o.projectRoot};
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      # http-backend enables receive-pack for an authenticated user.
      fastcgi_param REMOTE_USER bench;
      fastcgi_param PATH_INFO $uri;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_TYPE $content_type;
      fastcgi_param CONTENT_LENGTH $content_length;
      fastcgi_param HTTP_CONTENT_ENCODING $http_content_encoding;
      fastcgi_param HTTP_GIT_PROTOCOL $http_git_protocol;
      fastcgi_param REMOTE_ADDR $remote_addr;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
      fastcgi_param GATEWAY_INTERFACE CGI/1.1;
    }
  }
}
`;
}

/** The fcgiwrap command line: `children` preforked processes (each serves one request at a time), only `script`. */
export function fcgiwrapArgs(socket: string, children: number, script: string): string[] {
  return ['-c', String(children), '-s', `unix:${socket}`, '-p', script];
}

/**
 * The CGI script: git http-backend as the shell's child, then the shell's `times` into
 * `<cpuDir>/<pid>`. fcgiwrap ignores SIGCHLD, so the kernel never adds its children's CPU to its
 * own: git's CPU (http-backend, upload-pack, pack-objects) is counted as under sshd's forced command.
 */
export function backendWrapper(cpuDir: string): string {
  return `#!/bin/sh
# CGI of the benchmark's nginx: git http-backend, then its CPU for the benchmark.
${GIT_HTTP_BACKEND}
status=$?
times >'${cpuDir}/'"$$" 2>/dev/null
exit $status
`;
}

/** The installed nginx and fcgiwrap package versions, e.g. "nginx 1.22.1-9, fcgiwrap 1.1.0-14". */
export function nginxVersion(): string | undefined {
  const v = (pkg: string) => commandOutput('dpkg-query', ['-W', pkg])?.split('\t')[1];
  const nginx = v('nginx') ?? v('nginx-light') ?? v('nginx-core');
  return nginx ? `nginx ${nginx}, fcgiwrap ${v('fcgiwrap') ?? '?'}` : undefined;
}

/** `<root>/<project>.git` → the served bare repository, for every project. */
async function linkProjects(root: string, repos: Readonly<Record<string, string>>): Promise<void> {
  for (const [project, dir] of Object.entries(repos)) {
    const link = join(root, `${project}.git`);
    await mkdir(dirname(link), { recursive: true });
    if (!existsSync(link)) await symlink(dir, link);
  }
}

/** fcgiwrap on a unix socket in `dir`, its CGI the shell that runs git http-backend and reports git's CPU. */
async function startFcgiwrap(dir: string, children: number) {
  const fcgiSocket = join(dir, 'fcgiwrap.sock');
  const script = join(dir, 'git-http-backend.sh');
  const cpuDir = join(dir, 'git-cpu');
  await mkdir(cpuDir, { recursive: true });
  await writeFile(script, backendWrapper(cpuDir), { mode: 0o755 });
  const fcgi = track(FCGIWRAP, fcgiwrapArgs(fcgiSocket, children, script), {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH },
  });
  return { fcgi, fcgiSocket, script, cpuDir };
}

/** The config's settings: the run as root only where nginx needs a `user` line, connections for the highest concurrency. */
function configInput(
  dir: string,
  port: number,
  fcgiSocket: string,
  projectRoot: string,
  script: string,
  maxConcurrency: number,
): NginxConfigInput {
  const user = nginxUserLine() === '' ? undefined : 'root';
  const workerConnections = Math.max(1024, 4 * maxConcurrency);
  return { dir, port, fcgiSocket, projectRoot, script, user, workerConnections };
}

/** nginx in the foreground on `config`, once it listens on `port` and fcgiwrap on its socket (else both stopped). */
async function spawnNginx(
  dir: string,
  config: string,
  w: { port: number; fcgiSocket: string; stopFcgi: () => Promise<void> },
): Promise<ChildProcess> {
  const child = track(NGINX, nginxArgs(dir, config), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-8192);
  });
  try {
    await waitForPort(w.port, child, 10_000, 'nginx');
    if (!existsSync(w.fcgiSocket)) await waitForSocket(w.fcgiSocket, 5_000);
  } catch (err) {
    child.kill('SIGKILL');
    await waitExit(child, 5_000);
    await w.stopFcgi();
    throw new Error(`nginx did not start (${(err as Error).message}): ${stderr.trim()}`);
  }
  return child;
}

/** Starts fcgiwrap, then nginx, in `dir`, serving `repos` (project path → bare repository folder). */
export async function startNginx(
  dir: string,
  repos: Readonly<Record<string, string>>,
  opts: { fcgiChildren: number; maxConcurrency: number },
): Promise<NginxServer> {
  for (const bin of [NGINX, FCGIWRAP, GIT_HTTP_BACKEND]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: apt-get install -y nginx fcgiwrap git`);
  }
  const projectRoot = join(dir, 'repos');
  await makeNginxTempDirs(dir);
  await linkProjects(projectRoot, repos);
  const { fcgi, fcgiSocket, script, cpuDir } = await startFcgiwrap(dir, opts.fcgiChildren);
  const port = await freePort();
  const config = join(dir, 'nginx.conf');
  await writeFile(
    config,
    nginxConfig(configInput(dir, port, fcgiSocket, projectRoot, script, opts.maxConcurrency)),
  );
  const stopFcgi = () => stopChild(fcgi, 5_000);
  try {
    await mustRun(NGINX, nginxArgs(dir, config, true), { timeoutMs: 30_000 });
  } catch (err) {
    await stopFcgi();
    throw err;
  }
  const child = await spawnNginx(dir, config, { port, fcgiSocket, stopFcgi });
  const fcgiPid = fcgi.pid;
  if (child.pid === undefined || fcgiPid === undefined) throw new Error('nginx or fcgiwrap has no pid');
  return {
    pid: child.pid,
    port,
    url: (project) => `http://127.0.0.1:${port}/${project}.git`,
    serverCpu: {
      nginx: liveTreeCpu(child.pid),
      fcgiwrap: liveTreeCpu(fcgiPid),
      'fcgiwrap-git': forcedCommandGitCpu(cpuDir),
    },
    reapers: () => childPids(fcgiPid),
    stop: async () => {
      await stopChild(child, 5_000);
      // fcgiwrap's master leaves its preforked processes running when it ends: stop them by pid.
      const preforked = childPids(fcgiPid);
      await stopFcgi();
      await stopPids(preforked, 5_000);
    },
  };
}

/** SIGTERM to each pid, SIGKILL to those still there after `graceMs`. */
async function stopPids(pids: readonly number[], graceMs: number): Promise<void> {
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  const alive = () => pids.filter((pid) => processCpu(pid) !== undefined);
  while (alive().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of alive()) signal(pid, 'SIGKILL');
}

async function waitForSocket(path: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`fcgiwrap did not bind ${path}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * CPU of a master and its long-lived children (nginx's workers, fcgiwrap's preforked processes),
 * each with what it has reaped: the master alone would miss the children until they exit.
 */
export function liveTreeCpu(pid: number): CpuCounter {
  return () => {
    const master = processCpu(pid);
    if (!master) return undefined;
    let total = master.own + master.children;
    for (const c of childPids(pid)) {
      const cpu = processCpu(c);
      if (cpu) total += cpu.own + cpu.children;
    }
    return total;
  };
}
