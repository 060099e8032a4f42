import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import {
  type CpuCounter,
  commandOutput,
  exited,
  mustRun,
  stopChild,
  track,
  treeCpu,
  waitExit,
} from './proc.js';

/**
 * Contender 2: Debian's OpenSSH server, started by the benchmark on a loopback port with its own
 * config and host key (the system's sshd is never touched). The benchmark key is authorized with a
 * forced command that runs git-upload-pack / git-receive-pack on the same bare repositories the
 * stack serves — what an admin would run instead of the cells path.
 */
export const SSHD = '/usr/sbin/sshd';

export interface OpenSshServer {
  pid: number;
  port: number;
  user: string;
  url(projectPath: string): string;
  /** The ssh command line git uses (`GIT_SSH_COMMAND`). */
  sshCommand: string;
  /** `sshd`: the server's own processes (listener, connection processes, the forced command's shell); `sshd-git`: git under them. */
  serverCpu: { sshd: CpuCounter; 'sshd-git': CpuCounter };
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** `ssh` options shared by every contender that speaks SSH (no user config, pinned host key). */
export function sshCommandLine(privateKey: string, knownHosts: string): string {
  return [
    'ssh -F /dev/null',
    `-i ${privateKey}`,
    '-o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR',
    `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${knownHosts}`,
  ].join(' ');
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The forced command: maps `git-(upload|receive)-pack '/<project>.git'` to a repository folder. git
 * runs as the shell's child (not `exec`), so that the shell's `times` can record git's CPU (its
 * pack-objects included) in `<cpuDir>/<pid>` for the benchmark, which counts git apart from sshd.
 */
export function wrapperScript(repos: Readonly<Record<string, string>>, cpuDir: string): string {
  const cases = Object.entries(repos)
    .map(([project, dir]) => `  ${shellQuote(project)}) repo=${shellQuote(dir)} ;;`)
    .join('\n');
  return `#!/bin/sh
# Forced command of the benchmark's private sshd: git-upload-pack / git-receive-pack on the benchmark
# repositories, nothing else.
set -eu
cmd=\${SSH_ORIGINAL_COMMAND:-}
case "$cmd" in
  "git-upload-pack "*) verb=upload-pack ;;
  "git-receive-pack "*) verb=receive-pack ;;
  *) echo "only git-upload-pack and git-receive-pack are allowed" >&2; exit 1 ;;
esac
path=\${cmd#* }
path=\${path#\\'}
path=\${path%\\'}
path=\${path#/}
path=\${path%.git}
case "$path" in
${cases}
  *) echo "no such repository: $path" >&2; exit 1 ;;
esac
# git as a child, so that times reports its CPU (the benchmark counts it apart from sshd).
set +e
git "$verb" "$repo"
status=$?
times >${shellQuote(`${cpuDir}/`)}"$$" 2>/dev/null
exit $status
`;
}

/** The children's CPU seconds (user + system) in the output of the shell builtin `times`. */
export function childrenSecondsOfTimes(text: string): number | undefined {
  const values = [...text.matchAll(/(\d+)m(\d+(?:\.\d+)?)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (values.length !== 4) return undefined;
  return (values[2] ?? 0) + (values[3] ?? 0);
}

/**
 * Running total of git's CPU under the forced command, from the files its `times` writes. Each
 * complete file is added once and removed (so a recycled pid cannot hide a session).
 */
export function forcedCommandGitCpu(cpuDir: string): () => number {
  let total = 0;
  return () => {
    for (const name of readdirSync(cpuDir)) {
      const path = `${cpuDir}/${name}`;
      const seconds = childrenSecondsOfTimes(readFileSync(path, 'utf8'));
      if (seconds === undefined) continue; // still being written
      total += seconds;
      unlinkSync(path);
    }
    return total;
  };
}

export function sshdConfig(o: {
  port: number;
  hostKey: string;
  authorizedKeys: string;
  user: string;
}): string {
  return `# The benchmark's own sshd (not the system's): loopback only, one user, forced git command.
ListenAddress 127.0.0.1
Port ${o.port}
HostKey ${o.hostKey}
PidFile none
UsePAM no
StrictModes no
AuthorizedKeysFile ${o.authorizedKeys}
AllowUsers ${o.user}
PermitRootLogin forced-commands-only
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthenticationMethods publickey
AllowTcpForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTTY no
PermitTunnel no
PrintMotd no
PrintLastLog no
UseDNS no
AcceptEnv GIT_PROTOCOL
# The forced command runs through the login shell. Debian's bash sources ~/.bashrc for top-level
# shells started by sshd; a dedicated git account would have no such file. SHLVL=1 makes bash treat
# the session as nested, so this machine's rc files (e.g. pyenv set-up) are not timed.
SetEnv SHLVL=1
# 200 concurrent clones must not be dropped by the default 10:30:100.
MaxStartups 1000
LogLevel ERROR
`;
}

/** Resolves once something listens on `port` (the server `child`, named `name` in errors). */
export function waitForPort(port: number, child: ChildProcess, ms: number, name = 'sshd'): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (exited(child)) return reject(new Error(`${name} exited`));
      if (Date.now() > deadline) return reject(new Error(`${name} did not listen on ${port}`));
      const probe = createServer();
      probe.once('error', () => resolve()); // in use → sshd is listening
      probe.listen(port, '127.0.0.1', () => probe.close(() => setTimeout(attempt, 50)));
    };
    attempt();
  });
}

/** The installed OpenSSH server package version, e.g. "1:9.2p1-2+deb12u10". */
export function sshdVersion(): string | undefined {
  // `dpkg-query -W <pkg>` prints "<pkg>\t<version>".
  const pkg = commandOutput('dpkg-query', ['-W', 'openssh-server'])?.split('\t');
  if (pkg?.[0] === 'openssh-server' && pkg[1]) return `openssh-server ${pkg[1]}`;
  return existsSync(SSHD) ? commandOutput(SSHD, ['-V'])?.split('\n')[0] : undefined;
}

/** The host key and the benchmark client's key in `dir` (generated once, kept across runs). */
async function ensureKeys(dir: string): Promise<{ hostKey: string; clientKey: string }> {
  const hostKey = join(dir, 'ssh_host_ed25519_key');
  const clientKey = join(dir, 'client_ed25519');
  for (const [key, comment] of [
    [hostKey, 'bench-sshd-host'],
    [clientKey, 'bench-client'],
  ] as const) {
    if (!existsSync(key)) {
      await mustRun('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', key], {
        timeoutMs: 30_000,
      });
    }
    await chmod(key, 0o600);
  }
  return { hostKey, clientKey };
}

interface SshdFiles {
  config: string;
  port: number;
  user: string;
  clientKey: string;
  knownHosts: string;
  /** Where the forced command's shell writes git's CPU. */
  cpuDir: string;
}

/** sshd's files in `dir`: keys, the forced command, authorized_keys, the config (checked with `-t`), known_hosts. */
async function writeSshdFiles(dir: string, repos: Readonly<Record<string, string>>): Promise<SshdFiles> {
  const { hostKey, clientKey } = await ensureKeys(dir);
  const wrapper = join(dir, 'git-only.sh');
  const cpuDir = join(dir, 'git-cpu');
  await mkdir(cpuDir, { recursive: true });
  await writeFile(wrapper, wrapperScript(repos, cpuDir), { mode: 0o755 });
  const clientPub = (await readFile(`${clientKey}.pub`, 'utf8')).trim();
  const authorizedKeys = join(dir, 'authorized_keys');
  await writeFile(authorizedKeys, `restrict,command="${wrapper}" ${clientPub}\n`, { mode: 0o600 });
  const port = await freePort();
  const user = userInfo().username;
  const config = join(dir, 'sshd_config');
  await writeFile(config, sshdConfig({ port, hostKey, authorizedKeys, user }), { mode: 0o600 });
  await mustRun(SSHD, ['-t', '-f', config], { timeoutMs: 30_000 });
  const hostPub = (await readFile(`${hostKey}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
  const knownHosts = join(dir, 'known_hosts');
  await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`);
  return { config, port, user, clientKey, knownHosts, cpuDir };
}

/** Starts the private sshd in `dir` serving `repos` (project path → bare repository folder). */
export async function startOpenSsh(
  dir: string,
  repos: Readonly<Record<string, string>>,
): Promise<OpenSshServer> {
  if (!existsSync(SSHD)) {
    throw new Error(`${SSHD} is missing: install the OpenSSH server (apt-get install -y openssh-server)`);
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // sshd refuses to start without its privilege separation directory.
  try {
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new Error(
      `cannot create /run/sshd (sshd's privilege separation directory): ${(err as Error).message}`,
    );
  }
  const { config, port, user, clientKey, knownHosts, cpuDir } = await writeSshdFiles(dir, repos);
  const child = track(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-8192);
  });
  try {
    await waitForPort(port, child, 10_000);
  } catch (err) {
    child.kill('SIGKILL');
    await waitExit(child, 5_000);
    throw new Error(`OpenSSH server did not start (${(err as Error).message}): ${stderr.trim()}`);
  }
  if (child.pid === undefined) throw new Error('sshd has no pid');
  const tree = treeCpu(child.pid);
  const git = forcedCommandGitCpu(cpuDir);
  return {
    pid: child.pid,
    port,
    user,
    url: (project) => `ssh://${user}@127.0.0.1:${port}/${project}.git`,
    sshCommand: sshCommandLine(clientKey, knownHosts),
    serverCpu: {
      sshd: () => {
        const all = tree();
        return all === undefined ? undefined : all - git();
      },
      'sshd-git': git,
    },
    stop: () => stopChild(child, 5_000),
  };
}
