import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { gitalyAuthHeader } from '../../lib/gitaly-auth.js';
import { createLogger } from '../../lib/logger.js';
import { loadSshService, type SSHStreamResponse } from '../../lib/proto.js';
import { type GitalyConfig, loadGitalyConfig } from '../config.js';
import type { BoundAddresses } from '../listener.js';
import { buildGitalyServer, type GitalyServer, type GitalyServerDeps } from '../server.js';
import { StdoutWatch } from './stdout-watch.js';

/** Test helpers for mock-gitaly: temp folders, real git repositories, a started server, raw calls. */

const cleanups: Array<() => void | Promise<void>> = [];

/** Registers a cleanup for the next `cleanup()`. */
export function onCleanup(fn: () => void | Promise<void>): void {
  cleanups.push(fn);
}

/** Runs every registered cleanup (latest first); call from afterEach/afterAll. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()?.();
}

export function tempDir(prefix = 'mock-gitaly-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeSecret(dir: string, name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** A stub hook program, for suites that never push (the hooks only have to exist). */
export function stubHookProgram(): string {
  const path = join(tempDir(), 'hook-stub.mjs');
  writeFileSync(path, 'process.exit(1);\n');
  return path;
}

/** git with no system/global config and a fixed identity, so tests do not depend on the machine. */
export const GIT_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  LANG: 'C',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
};

export interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export function run(
  file: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: Buffer | string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: opts.cwd, env: { ...GIT_ENV, ...opts.env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.end(opts.input);
  });
}

export async function git(args: string[], opts: Parameters<typeof run>[2] = {}): Promise<string> {
  const res = await run('git', args, opts);
  if (res.code !== 0) throw new Error(`git ${args.join(' ')} failed (${res.code}): ${res.stderr}`);
  return res.stdout.toString('utf8').trim();
}

/**
 * A bare repository at `<storage>/<relativePath>` whose `main` holds `files` (one commit), pushed
 * from a scratch work tree. Returns the commit id.
 */
export async function createRepo(
  storage: string,
  relativePath: string,
  files: Record<string, string | Buffer> = { 'README.md': '# test\n' },
): Promise<string> {
  const bare = join(storage, relativePath);
  mkdirSync(dirname(bare), { recursive: true });
  await git(['init', '--bare', '--initial-branch=main', bare]);
  const work = tempDir('mock-gitaly-work-');
  await git(['init', '--initial-branch=main', work]);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(work, name)), { recursive: true });
    writeFileSync(join(work, name), content);
  }
  await git(['add', '.'], { cwd: work });
  await git(['commit', '-m', 'initial commit'], { cwd: work });
  await git(['push', `file://${bare}`, 'main'], { cwd: work });
  return git(['rev-parse', 'HEAD'], { cwd: work });
}

export interface StartedGitaly {
  config: GitalyConfig;
  gitaly: GitalyServer;
  /** `127.0.0.1:<port>` of the TCP listener. */
  address: string;
  /** Everything bound (TLS port, unix path when configured). */
  bound: BoundAddresses;
  token: string;
  storage: string;
  client: grpc.Client;
}

/** Starts a mock Gitaly on 127.0.0.1:0 with one storage `default` and a fresh token. */
export async function startGitaly(
  settings: Record<string, unknown> = {},
  deps: GitalyServerDeps & { storage?: string } = {},
): Promise<StartedGitaly> {
  const dir = tempDir();
  const storage = deps.storage ?? join(dir, 'storage');
  mkdirSync(storage, { recursive: true });
  const token = `token-${Math.random().toString(36).slice(2)}`;
  const config = loadGitalyConfig(
    {
      listen: '127.0.0.1:0',
      storages: { default: storage },
      tokenFile: writeSecret(dir, 'gitaly_token', token),
      gitlabUrl: 'http://127.0.0.1:9',
      gitlabSecretFile: writeSecret(dir, 'gitlab_shell_secret', 'shell-secret'),
      ...settings,
    },
    {},
  );
  const gitaly = buildGitalyServer(config, createLogger('mock-gitaly-test', 'silent'), deps);
  const bound = await gitaly.start();
  const address = `127.0.0.1:${bound.port}`;
  const Client = loadSshService();
  const client = new Client(address, grpc.credentials.createInsecure());
  cleanups.push(async () => {
    client.close();
    await gitaly.stop(1000);
  });
  return { config, gitaly, address, bound, token, storage, client };
}

export function authMetadata(token: string, now?: number): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', gitalyAuthHeader(token, now));
  return md;
}

export interface CallOutcome {
  responses: SSHStreamResponse[];
  stdout: Buffer;
  stderr: string;
  status: grpc.StatusObject;
}

/** A raw bidi call with helpers to wait for output and for its end. */
export class RawCall {
  readonly call: grpc.ClientDuplexStream<unknown, SSHStreamResponse>;
  readonly responses: SSHStreamResponse[] = [];
  readonly done: Promise<CallOutcome>;
  private readonly watch = new StdoutWatch(() => this.stdout);

  constructor(client: grpc.Client, rpc: string, metadata: grpc.Metadata) {
    const method = (client as unknown as Record<string, (md: grpc.Metadata) => RawCall['call']>)[rpc];
    if (!method) throw new Error(`no RPC ${rpc}`);
    this.call = method.call(client, metadata);
    this.call.on('data', (res: SSHStreamResponse) => {
      this.responses.push(res);
      this.watch.wake();
    });
    this.call.on('error', () => {
      // The status carries it.
    });
    this.done = new Promise((resolve) => {
      this.call.on('status', (status: grpc.StatusObject) =>
        setImmediate(() =>
          resolve({ responses: this.responses, stdout: this.stdout, stderr: this.stderr, status }),
        ),
      );
    });
  }

  get stdout(): Buffer {
    return Buffer.concat(this.responses.flatMap((r) => (r.stdout ? [r.stdout] : [])));
  }

  get stderr(): string {
    return Buffer.concat(this.responses.flatMap((r) => (r.stderr ? [r.stderr] : []))).toString('utf8');
  }

  send(message: Record<string, unknown>): void {
    this.call.write(message);
  }

  /** Resolves when the stdout received so far satisfies `predicate`. */
  waitForStdout(predicate: (stdout: Buffer) => boolean, timeoutMs = 10_000): Promise<Buffer> {
    return this.watch.waitFor(predicate, timeoutMs);
  }
}

/** Live `git` processes whose parent is this process (the server runs in-process). */
export function gitChildren(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid ...
    const m = /^\d+ \((.*)\) (\S) (\d+)/.exec(stat);
    if (m && Number(m[3]) === process.pid && m[1]?.startsWith('git') && m[2] !== 'Z')
      found.push(`${pid} ${m[1]}`);
  }
  return found;
}

/** Polls until no git child is left; returns what is still alive after `timeoutMs` (empty = all gone). */
export async function waitForNoGit(timeoutMs = 2000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let left = gitChildren();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = gitChildren();
  }
  return left;
}
