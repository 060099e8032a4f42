import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/poll.js';
import { listProcesses } from '../helpers/procs.js';
import { type RunResult, run, runOk } from '../helpers/run.js';
import { buildGoProgram, GO_INSTALL_HINT, goToolchain, removeGoBuilds } from './go-build.js';
import { type GoServer, startServer } from './go-server.js';

// The two Go peers (a Gitaly-like server and a Workhorse-like client) against each other, with
// real git on both ends. This proves the peers themselves before they are pointed at the
// project's Node bridge and mock Gitaly.

const toolchain = goToolchain();
const SKIP_NOTE = `go toolchain not installed: ${GO_INSTALL_HINT}`;
const TOKEN = 'interop-secret';
const REPO_URL = 'ssh://git@gitlab.example/group/project.git';

describe('Go interop peers: workhorse-client → gitaly-server', () => {
  let dir = '';
  let client = '';
  let serverBin = '';
  let bare = '';
  let server: GoServer | undefined;
  const servers: GoServer[] = [];

  /** Environment for git: no user or system config, the peer client as the SSH command. */
  function gitEnv(clientArgs: string[] = []): NodeJS.ProcessEnv {
    const cmd = [client, '-gitaly', `tcp://127.0.0.1:${server?.port}`, '-storage', 'default', ...clientArgs];
    return {
      PATH: process.env.PATH,
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Interop',
      GIT_AUTHOR_EMAIL: 'interop@example.com',
      GIT_COMMITTER_NAME: 'Interop',
      GIT_COMMITTER_EMAIL: 'interop@example.com',
      GIT_SSH_COMMAND: cmd.map((a) => `'${a}'`).join(' '),
    };
  }

  const withToken = () => ['-token-file', join(dir, 'token')];
  const git = (args: string[], env = gitEnv(withToken())): Promise<RunResult> =>
    run('git', args, { cwd: dir, env, timeoutMs: 30_000 });
  const gitOk = async (args: string[], env = gitEnv(withToken())): Promise<string> => {
    const r = await git(args, env);
    if (r.code !== 0) {
      throw new Error(
        `git ${args.join(' ')} exited ${r.code ?? r.signal}\n${r.stderr}\nserver log:\n${server?.log()}`,
      );
    }
    return r.stdout.trim();
  };
  const lastProtocol = (log: string): string | undefined =>
    [...log.matchAll(/SSHUploadPackWithSidechannel: repo .* git_protocol "([^"]*)"/g)].at(-1)?.[1];

  beforeAll(async () => {
    if (!toolchain) return;
    [serverBin, client] = await Promise.all([
      buildGoProgram('gitaly-server'),
      buildGoProgram('workhorse-client'),
    ]);
    dir = await mkdtemp(join(tmpdir(), 'interop-peers-'));
    await writeFile(join(dir, 'token'), `${TOKEN}\n`);
    bare = join(dir, 'storage', 'group', 'project.git');
    const env = gitEnv();
    await runOk('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare], { env });
    const seed = join(dir, 'seed');
    await runOk('git', ['init', '--quiet', '--initial-branch=main', seed], { env });
    // The random blob makes the pack span many sideband packets and yamux windows (256 KiB).
    for (const [file, text] of [
      ['README.md', '# project\n'],
      ['src/main.txt', 'second commit\n'],
      ['blob.bin', randomBytes(3 * 1024 * 1024)],
    ] as const) {
      await mkdir(dirname(join(seed, file)), { recursive: true });
      await writeFile(join(seed, file), text);
      await runOk('git', ['add', '.'], { cwd: seed, env });
      await runOk('git', ['commit', '--quiet', '-m', `add ${file}`], { cwd: seed, env });
    }
    await runOk('git', ['push', '--quiet', bare, 'main'], { cwd: seed, env });
    server = await startServer(serverBin, [
      '-token-file',
      join(dir, 'token'),
      '-storage',
      `default=${join(dir, 'storage')}`,
    ]);
    servers.push(server);
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    if (dir) await rm(dir, { recursive: true, force: true });
    await removeGoBuilds();
  });

  it('clones with protocol v2 through a backchannel sidechannel', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    await gitOk(['clone', '--quiet', REPO_URL, 'clone-v2']);
    const head = await gitOk(['-C', 'clone-v2', 'rev-parse', 'HEAD']);
    expect(head).toBe(await gitOk(['--git-dir', bare, 'rev-parse', 'main']));
    expect(lastProtocol(server!.log())).toBe('version=2');
    expect(server!.log()).toMatch(/handshake step 2: accepted yamux stream 1 as the gRPC connection/);
    expect(server!.log()).toMatch(/client confirmed with "ok"/);
  });

  it('clones with protocol v0', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    await gitOk(['-c', 'protocol.version=0', 'clone', '--quiet', REPO_URL, 'clone-v0']);
    const head = await gitOk(['-C', 'clone-v0', 'rev-parse', 'HEAD']);
    expect(head).toBe(await gitOk(['--git-dir', bare, 'rev-parse', 'main']));
    expect(lastProtocol(server!.log())).toBe('');
  });

  it('pushes a new commit with SSHReceivePack over the same kind of connection', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    await gitOk(['clone', '--quiet', REPO_URL, 'clone-push']);
    const work = join(dir, 'clone-push');
    await writeFile(join(work, 'pushed.txt'), 'pushed through the Go peers\n');
    await writeFile(join(work, 'pushed.bin'), randomBytes(1024 * 1024));
    await gitOk(['-C', work, 'add', 'pushed.txt', 'pushed.bin']);
    await gitOk(['-C', work, 'commit', '--quiet', '-m', 'pushed commit']);
    const pushed = await gitOk(['-C', work, 'rev-parse', 'HEAD']);
    await gitOk(['-C', work, 'push', '--quiet', 'origin', 'main']);
    expect(await gitOk(['--git-dir', bare, 'rev-parse', 'main'])).toBe(pushed);
    expect(server!.log()).toMatch(/SSHReceivePack: repo .* gl_id "user-1"/);
  });

  it('serves git archive --remote with SSHUploadArchive', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    await gitOk(['archive', '--format=tar', `--remote=${REPO_URL}`, '-o', 'archive.tar', 'main']);
    const files = (await runOk('tar', ['tf', join(dir, 'archive.tar')])).split('\n');
    expect(files).toEqual(expect.arrayContaining(['README.md', 'src/main.txt', 'blob.bin']));
  });

  it('fails a clone with a wrong token', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    await writeFile(join(dir, 'wrong-token'), 'not-the-secret\n');
    const r = await git(
      ['clone', REPO_URL, 'clone-bad-token'],
      gitEnv(['-token-file', join(dir, 'wrong-token')]),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/PermissionDenied desc = permission denied: wrong hmac signature/);
    const none = await git(['clone', REPO_URL, 'clone-no-token'], gitEnv());
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/Unauthenticated desc = authentication required/);
  });

  it('refuses the sidechannel RPC on a plain (non-multiplexed) connection; bidi RPCs still work there', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    const env = gitEnv([...withToken(), '-plain']);
    const r = await git(['clone', REPO_URL, 'clone-plain'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/fail to extract mux session: non-multiplexed connection/);
    await gitOk(['archive', '--format=tar', `--remote=${REPO_URL}`, '-o', 'plain.tar', 'main'], env);
    expect(await runOk('tar', ['tf', join(dir, 'plain.tar')])).toMatch(/README\.md/);
  });

  it('still clones when the server opens an eager HTTP/2 backchannel stream (Gitaly < 17.11)', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    const eager = await startServer(serverBin, [
      '-eager-backchannel',
      '-token-file',
      join(dir, 'token'),
      '-storage',
      `default=${join(dir, 'storage')}`,
    ]);
    servers.push(eager);
    const previous = server;
    server = eager;
    try {
      await gitOk(['clone', '--quiet', REPO_URL, 'clone-eager']);
      const head = await gitOk(['-C', 'clone-eager', 'rev-parse', 'HEAD']);
      expect(head).toBe(await gitOk(['--git-dir', bare, 'rev-parse', 'main']));
      expect(eager.log()).toMatch(/eager backchannel: opened yamux stream 2/);
      // The client served HTTP/2 on it: its SETTINGS (and the ACK of ours) reached the server.
      const logged = (re: RegExp) => waitUntil(() => re.test(eager.log()), 5_000, `the log line ${re}`, 100);
      await logged(/eager backchannel stream 2: SETTINGS ack=false/);
      await logged(/eager backchannel stream 2: SETTINGS ack=true/);
    } finally {
      server = previous;
      await eager.stop();
    }
  });

  it('closes a sidechannel whose id it never registered, and the call fails', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    const wrong = await startServer(serverBin, [
      '-wrong-sidechannel-id',
      '-token-file',
      join(dir, 'token'),
      '-storage',
      `default=${join(dir, 'storage')}`,
    ]);
    servers.push(wrong);
    const previous = server;
    server = wrong;
    try {
      const r = await git(['clone', REPO_URL, 'clone-wrong-id']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/id 4294967296 not registered; closing the stream/);
      expect(r.stderr).toMatch(/Internal desc = opennig sidechannel: sidechannel: receive confirmation: EOF/);
    } finally {
      server = previous;
      await wrong.stop();
    }
  });

  it('leaves no peer or git process behind once the servers are stopped', async (ctx) => {
    if (!toolchain) ctx.skip(SKIP_NOTE);
    await Promise.all(servers.map((s) => s.stop()));
    const markers = [dir, serverBin, client];
    const left = () =>
      listProcesses().filter((p) => p.state !== 'Z' && markers.some((m) => p.cmdline.includes(m)));
    await waitUntil(() => left().length === 0, 5_000, 'no Go peer left', 100);
  });
});
