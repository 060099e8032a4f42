import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { gitEnv } from './git-repos.js';

const run = promisify(execFile);

/** An OpenSSH key pair made with ssh-keygen; `blob` is the base64 public key blob. */
export interface KeyPair {
  privateKey: string;
  publicKey: string;
  blob: string;
}

export async function makeKeyPair(path: string): Promise<KeyPair> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', path]);
  chmodSync(path, 0o600);
  const pub = readFileSync(`${path}.pub`, 'utf8').trim();
  return { privateKey: path, publicKey: `${path}.pub`, blob: pub.split(/\s+/)[1] as string };
}

export interface SshOptionsExtra {
  /** Check the router's host key against this known_hosts file (default: no check). */
  knownHosts?: string;
  /** `-v` instead of `LogLevel=ERROR`: the negotiation shows on stderr. */
  verbose?: boolean;
}

/** OpenSSH client options for talking to the router on loopback with one key and no prompts. */
export function sshOptions(key: string, port: number, extra: SshOptionsExtra = {}): string[] {
  const hostKey = extra.knownHosts
    ? ['-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${extra.knownHosts}`]
    : ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null'];
  return [
    ...(extra.verbose ? ['-v'] : ['-o', 'LogLevel=ERROR']),
    '-F',
    '/dev/null',
    '-i',
    key,
    '-p',
    String(port),
    ...hostKey,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'BatchMode=yes',
  ];
}

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a child to completion, collecting its output (never rejects). */
export function collect(child: ChildProcessWithoutNullStreams, input?: string | Buffer): Promise<Result> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('latin1');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: `${stderr}${err.message}` }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** `ssh git@127.0.0.1 <command>` with the real OpenSSH client. */
export function ssh(
  key: string,
  port: number,
  command: string[],
  extra: string[] = [],
): ChildProcessWithoutNullStreams {
  return spawn('ssh', [...sshOptions(key, port), ...extra, 'git@127.0.0.1', ...command], { env: gitEnv() });
}

/** A real git command whose remote is reached through the router with `GIT_SSH_COMMAND`. */
export function gitViaSsh(
  key: string,
  port: number,
  args: string[],
  opts: { cwd?: string } = {},
): ChildProcessWithoutNullStreams {
  const sshCommand = ['ssh', ...sshOptions(key, port)].join(' ');
  return spawn('git', args, { cwd: opts.cwd, env: gitEnv({ GIT_SSH_COMMAND: sshCommand }) });
}

export function remoteUrl(port: number, project: string): string {
  return `ssh://git@127.0.0.1:${port}/${project}.git`;
}
