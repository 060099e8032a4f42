import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellsHttpUrl } from './contenders.js';
import {
  backendWrapper,
  fcgiwrapArgs,
  GIT_HTTP_BACKEND,
  NGINX,
  type NginxServer,
  nginxConfig,
  startNginx,
} from './nginx.js';

const exec = promisify(execFile);
const git = (args: string[], cwd?: string) =>
  exec('git', args, { cwd, env: { PATH: process.env.PATH, HOME: tmpdir(), GIT_CONFIG_NOSYSTEM: '1' } });

describe('the nginx config', () => {
  const input = {
    dir: '/run/bench/nginx',
    port: 41234,
    fcgiSocket: '/run/bench/nginx/fcgiwrap.sock',
    projectRoot: '/run/bench/nginx/repos',
    script: '/run/bench/nginx/git-http-backend.sh',
    user: undefined,
    workerConnections: 2000,
  };

  it('listens on loopback only and keeps every path in the run folder', () => {
    const c = nginxConfig(input);
    expect(c).toContain('listen 127.0.0.1:41234;');
    expect(c).toContain('pid /run/bench/nginx/nginx.pid;');
    expect(c).toContain('error_log /run/bench/nginx/error.log');
    for (const t of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
      expect(c).toContain(`${t}_temp_path /run/bench/nginx/tmp/${t};`);
    expect(c).toContain('daemon off;');
    expect(c).toContain('worker_connections 2000;');
    expect(c).toContain('worker_rlimit_nofile 4064;');
    expect(c).not.toMatch(/^user /m);
    expect(nginxConfig({ ...input, user: 'root' })).toMatch(/^user root;$/m);
  });

  it('hands git’s three routes to git http-backend with the project root and receive-pack on', () => {
    const c = nginxConfig(input);
    expect(c).toContain('fastcgi_pass unix:/run/bench/nginx/fcgiwrap.sock;');
    expect(c).toContain('fastcgi_param SCRIPT_FILENAME /run/bench/nginx/git-http-backend.sh;');
    expect(c).toContain('fastcgi_param GIT_PROJECT_ROOT /run/bench/nginx/repos;');
    expect(c).toContain('fastcgi_param GIT_HTTP_EXPORT_ALL "";');
    expect(c).toContain('fastcgi_param REMOTE_USER bench;');
    expect(c).toContain('fastcgi_param HTTP_GIT_PROTOCOL $http_git_protocol;');
    expect(c).toContain('client_max_body_size 0;');
    expect(c).toContain('location ~ ^/.+\\.git/(info/refs|git-upload-pack|git-receive-pack)$ {');
  });

  it('runs fcgiwrap with its process count on the unix socket, only git http-backend allowed', () => {
    expect(fcgiwrapArgs('/s/f.sock', 7, '/s/cgi.sh')).toEqual([
      '-c',
      '7',
      '-s',
      'unix:/s/f.sock',
      '-p',
      '/s/cgi.sh',
    ]);
    const w = backendWrapper('/s/cpu');
    expect(w).toContain(`\n${GIT_HTTP_BACKEND}\nstatus=$?\n`);
    expect(w).toContain(`times >'/s/cpu/'"$$"`);
  });

  it('puts the demo user’s password in the cells-path HTTP URL', () => {
    const user = { username: 'bob', password: 'bob-password' };
    expect(cellsHttpUrl('127.0.0.1:8080', user, 'gitlab-org/gitlab')).toBe(
      'http://bob:bob-password@127.0.0.1:8080/gitlab-org/gitlab.git',
    );
    expect(cellsHttpUrl('http://127.0.0.1:8080', user, 'a/b')).toBe(
      'http://bob:bob-password@127.0.0.1:8080/a/b.git',
    );
  });
});

describe.runIf(existsSync(NGINX))('the private nginx', () => {
  let dir: string;
  let server: NginxServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bench-nginx-'));
    await git(['init', '-q', '--bare', '-b', 'main', join(dir, 'served.git')]);
    await mkdir(join(dir, 'work'));
    await git(['init', '-q', '-b', 'main'], join(dir, 'work'));
    await writeFile(join(dir, 'work', 'a.txt'), 'a\n');
    await git(['add', 'a.txt'], join(dir, 'work'));
    await git(['-c', 'user.name=b', '-c', 'user.email=b@x', 'commit', '-q', '-m', 'a'], join(dir, 'work'));
    await git(['push', '-q', join(dir, 'served.git'), 'main'], join(dir, 'work'));
    server = await startNginx(
      join(dir, 'nginx'),
      { 'group/project': join(dir, 'served.git') },
      {
        fcgiChildren: 2,
        maxConcurrency: 2,
      },
    );
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('clones and pushes the served repository over HTTP, and stops every process it started', async () => {
    const url = server.url('group/project');
    expect(url).toBe(`http://127.0.0.1:${server.port}/group/project.git`);
    await git(['clone', '-q', '--bare', url, join(dir, 'clone.git')]);
    const head = (await git(['--git-dir', join(dir, 'clone.git'), 'rev-parse', 'main'])).stdout;
    expect(head).toBe((await git(['--git-dir', join(dir, 'served.git'), 'rev-parse', 'main'])).stdout);
    await git(['push', '-q', url, 'main:refs/heads/pushed'], join(dir, 'work'));
    expect((await git(['--git-dir', join(dir, 'served.git'), 'rev-parse', 'pushed'])).stdout).toBe(head);
    expect(server.reapers()).toHaveLength(2);
    expect(server.serverCpu.nginx()).toBeGreaterThanOrEqual(0);
    // git's CPU is read from the wrapper's `times` files (a number, not undefined).
    expect(server.serverCpu['fcgiwrap-git']()).toBeGreaterThanOrEqual(0);
    await expect(git(['ls-remote', `http://127.0.0.1:${server.port}/group/other.git`])).rejects.toThrow();
    const pids = [server.pid, ...server.reapers()];
    await server.stop();
    const alive = pids.filter((pid) => existsSync(`/proc/${pid}`));
    expect(alive).toEqual([]);
  }, 30_000);
});
