/** @file The git contenders of one run, their warm-up, and what each SSH server negotiates. */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { demoWorld } from '../stack/topology-file-load.js';
import { CELLS_USER, PROJECTS } from './bench-data.js';
import {
  CONTENDER_LABELS,
  type GitContender,
  type GitContenderId,
  type GitWorkloadContext,
  type RepoRole,
  type ServedRepo,
  type ServerSide,
} from './git-workloads.js';
import type { NginxServer } from './nginx.js';
import { type OpenSshServer, sshCommandLine } from './openssh.js';
import { type FailureLog, type Outcome, okValue } from './outcome.js';
import { type CpuCounter, describeFailure, ownCpu, reapedChildrenCpu, run } from './proc.js';
import {
  AES_GCM,
  type AesGcmId,
  negotiatedAlgorithms,
  type SshAlgorithms,
  type SshVariant,
} from './ssh-ciphers.js';
import type { BenchStack } from './stack-runner.js';

/** The servers of the git contenders and how their start went. */
export interface GitServers {
  sshd: OpenSshServer | undefined;
  stack: BenchStack | undefined;
  nginx: NginxServer | undefined;
  sshdStart: Outcome<void>;
  stackStart: Outcome<void>;
  nginxStart: Outcome<void>;
}

/**
 * The git contenders: direct `file://`, the private OpenSSH, the cells path (router → bridge →
 * Gitaly) over SSH, the private nginx + git http-backend, and the cells path over HTTP.
 */
export function gitContenders(
  baseEnv: NodeJS.ProcessEnv,
  repos: Record<RepoRole, ServedRepo>,
  servers: GitServers,
): GitContender[] {
  const { sshd, stack, sshdStart, stackStart } = servers;
  const direct: GitContender = {
    id: 'direct',
    url: (role) => `file://${repos[role].dir}`,
    env: baseEnv,
    server: () => ({ cpu: {}, reapers: [] }),
  };
  const openssh: GitContender = sshd
    ? {
        id: 'openssh',
        url: (role) => sshd.url(repos[role].project),
        env: { ...baseEnv, GIT_SSH_COMMAND: sshd.sshCommand },
        server: () => ({ cpu: sshd.serverCpu, reapers: [sshd.pid] }),
      }
    : unavailableContender('openssh', okValue(sshdStart) ?? errorOf(sshdStart));
  let cells: GitContender;
  if (stack) {
    const user = stack.json.users.find((u) => u.username === CELLS_USER);
    cells = user
      ? {
          id: 'cells',
          url: (role) => stack.url(repos[role].project),
          env: { ...baseEnv, GIT_SSH_COMMAND: sshCommandLine(user.privateKey, stack.json.knownHosts) },
          server: (role) =>
            cellsSide(stack, role === 'history' ? PROJECTS.history.cell : PROJECTS.large.cell),
        }
      : unavailableContender('cells', `stack.json has no user ${CELLS_USER}`);
  } else {
    cells = unavailableContender('cells', errorOf(stackStart));
  }
  return [
    direct,
    openssh,
    cells,
    nginxContender(baseEnv, repos, servers),
    cellsHttpContender(baseEnv, repos, servers),
  ];
}

function nginxContender(
  baseEnv: NodeJS.ProcessEnv,
  repos: Record<RepoRole, ServedRepo>,
  s: GitServers,
): GitContender {
  const nginx = s.nginx;
  if (!nginx) return unavailableContender('nginx', errorOf(s.nginxStart));
  return {
    id: 'nginx',
    url: (role) => nginx.url(repos[role].project),
    env: baseEnv,
    server: () => ({ cpu: nginx.serverCpu, reapers: nginx.reapers() }),
  };
}

/** `http://<user>:<password>@<router HTTP front>/<project>.git` (the demo user's topology-file password). */
export function cellsHttpUrl(
  routerHttp: string,
  user: { username: string; password: string },
  project: string,
): string {
  const url = new URL(
    `${routerHttp.startsWith('http') ? routerHttp : `http://${routerHttp}`}/${project}.git`,
  );
  url.username = user.username;
  url.password = user.password;
  return url.href;
}

function cellsHttpContender(
  baseEnv: NodeJS.ProcessEnv,
  repos: Record<RepoRole, ServedRepo>,
  s: GitServers,
): GitContender {
  const stack = s.stack;
  if (!stack) return unavailableContender('cells-http', errorOf(s.stackStart));
  const password = demoWorld().users.find((u) => u.username === CELLS_USER)?.password;
  if (password === undefined)
    return unavailableContender('cells-http', `the demo world has no user ${CELLS_USER}`);
  const user = { username: CELLS_USER, password };
  return {
    id: 'cells-http',
    url: (role) => cellsHttpUrl(stack.json.router.http, user, repos[role].project),
    env: baseEnv,
    server: (role) => cellsSide(stack, role === 'history' ? PROJECTS.history.cell : PROJECTS.large.cell),
  };
}

/** One small clone per contender before anything is timed; a contender that fails it is out of the run. */
export async function warmUp(ctx: GitWorkloadContext): Promise<void> {
  for (const c of ctx.contenders) {
    if (c.unavailable) continue;
    const dest = join(ctx.scratch, `warmup-${c.id}`);
    const r = await run('git', ['clone', '-q', '--bare', c.url('small'), dest], {
      env: c.env,
      timeoutMs: 60_000,
    });
    await rm(dest, { recursive: true, force: true });
    if (r.code !== 0) {
      c.unavailable = `warm-up clone failed: ${describeFailure(r)}`;
      ctx.failures.record(`warm-up, ${CONTENDER_LABELS[c.id]}`, c.unavailable);
    }
  }
}

/**
 * What each SSH contender negotiates with the same client (key exchange costs differ a lot), as
 * the client picks and with `-c aes128-gcm@openssh.com` (the large clone's AES-GCM rounds).
 */
export async function sshAlgorithms(
  servers: { sshd: OpenSshServer | undefined; stack: BenchStack | undefined },
  failures: FailureLog,
): Promise<Partial<Record<SshVariant, SshAlgorithms>>> {
  const targets: Array<{ id: AesGcmId; line: string; port: number; user: string; name: string }> = [];
  const sshd = servers.sshd;
  if (sshd)
    targets.push({ id: 'openssh', line: sshd.sshCommand, port: sshd.port, user: sshd.user, name: 'OpenSSH' });
  const stack = servers.stack;
  const user = stack?.json.users.find((u) => u.username === CELLS_USER);
  if (stack && user) {
    const line = sshCommandLine(user.privateKey, stack.json.knownHosts);
    targets.push({ id: 'cells', line, port: stack.sshPort, user: 'git', name: 'the router' });
  }
  const out: Partial<Record<SshVariant, SshAlgorithms>> = {};
  const command = `git-upload-pack '${PROJECTS.small.path}.git'`;
  for (const t of targets) {
    const variants: Array<[SshVariant, string, string]> = [
      [t.id, t.line, ''],
      [`${t.id}-aes-gcm`, `${t.line} -c ${AES_GCM}`, ` with -c ${AES_GCM}`],
    ];
    for (const [key, line, what] of variants) {
      out[key] = await negotiatedAlgorithms(line, t.port, t.user, command).catch((err: unknown) => {
        failures.record(`ssh -v against ${t.name}${what}`, err);
        return undefined;
      });
    }
  }
  return out;
}

/** A git contender that could not be started: every workload then fails with `why`. */
function unavailableContender(id: GitContenderId, why: string): GitContender {
  return { id, unavailable: why, url: () => '', env: {}, server: () => ({ cpu: {}, reapers: [] }) };
}

/** The cells path's server side of a cell by process; git's processes (reaped by mock Gitaly) apart. */
function cellsSide(stack: BenchStack, cell: string): ServerSide {
  const gitaly = stack.pid(`gitaly-${cell}`);
  const cpu: Record<string, CpuCounter> = {
    router: ownCpu(stack.pid('router')),
    bridge: ownCpu(stack.pid(`bridge-${cell}`)),
    gitaly: ownCpu(gitaly),
    'gitaly-git': reapedChildrenCpu(gitaly),
    rails: ownCpu(stack.pid('mock-cell')),
  };
  return { cpu, reapers: [gitaly] };
}

export function errorOf(o: Outcome<unknown>): string {
  return o.ok ? 'unknown error' : o.error;
}
