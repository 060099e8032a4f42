import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { waitUntil } from '../test/helpers/poll.js';
import { GitProcess } from './git-process.js';
import { QuarantineSweeper, quarantinesOf, repositoriesIn, sweepRepository } from './quarantine.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  GIT_ENV,
  git,
  onCleanup,
  RawCall,
  run,
  startGitaly,
  tempDir,
} from './test-support/harness.js';

afterEach(cleanup);

const ZERO = '0'.repeat(40);

/** A commit of random files unknown to any repository, and the pack that carries it. */
async function newHistory(files = 24): Promise<{ head: string; pack: Buffer }> {
  const work = tempDir('quarantine-src-');
  await git(['init', '-q', '--initial-branch=main', work]);
  for (let i = 0; i < files; i++) writeFileSync(join(work, `f${i}.bin`), randomBytes(256 * 1024));
  await git(['add', '.'], { cwd: work });
  await git(['commit', '-q', '-m', 'pushed'], { cwd: work });
  const head = await git(['rev-parse', 'HEAD'], { cwd: work });
  const packed = await run('git', ['pack-objects', '--stdout', '--revs', '-q'], {
    cwd: work,
    input: `${head}\n`,
  });
  return { head, pack: packed.stdout };
}

const commands = (head: string, ref: string) =>
  Buffer.concat([encodePkt(`${ZERO} ${head} ${ref}\0report-status\n`), FLUSH_PKT]);

async function bareRepo(storage: string, name: string): Promise<string> {
  const bare = join(storage, name);
  mkdirSync(storage, { recursive: true });
  await git(['init', '-q', '--bare', bare]);
  return bare;
}

/** A pre-receive hook that marks that it runs, then waits (like one waiting for a slow Rails). */
function waitingHooks(): { dir: string; started: string } {
  const dir = tempDir('quarantine-hooks-');
  const started = join(dir, 'started');
  writeFileSync(join(dir, 'pre-receive'), `#!/bin/sh\ntouch '${started}'\nexec sleep 30\n`, { mode: 0o755 });
  return { dir, started };
}

function receivePack(bare: string, hooksDir?: string): GitProcess {
  const config = hooksDir ? ['-c', `core.hooksPath=${hooksDir}`] : [];
  const proc = new GitProcess({
    file: 'git',
    args: [...config, 'receive-pack', bare],
    env: GIT_ENV,
    cwd: bare,
  });
  proc.child.stdin.on('error', () => undefined);
  proc.child.stdout.resume();
  proc.child.stderr.resume();
  return proc;
}

const exited = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('close', (code, signal) => resolve(signal ?? code)),
  );

describe('git leaves its quarantine when a signal ends receive-pack; the sweep removes it', () => {
  it('receive-pack killed in its pre-receive hook (cancellation: EOF, SIGTERM to the group)', async () => {
    const bare = await bareRepo(tempDir(), 'repo.git');
    const { head, pack } = await newHistory();
    const hooks = waitingHooks();
    const proc = receivePack(bare, hooks.dir);
    const ended = exited(proc.child);
    proc.child.stdin.write(Buffer.concat([commands(head, 'refs/heads/x'), pack]));
    await waitUntil(() => existsSync(hooks.started), 15_000, 'pre-receive to run', 50);
    expect(quarantinesOf(bare)).toHaveLength(1);
    // The push still runs: the sweep must not touch its quarantine.
    expect(await sweepRepository(bare)).toBeUndefined();
    expect(quarantinesOf(bare)).toHaveLength(1);

    proc.kill();
    expect(await ended).toBe('SIGTERM');
    // git >= 2.39 removes the quarantine only at a normal exit, never from a signal handler.
    expect(quarantinesOf(bare)).toHaveLength(1);
    await waitUntil(async () => (await sweepRepository(bare)) !== undefined, 5_000, 'sweep', 100);
    expect(quarantinesOf(bare)).toEqual([]);
    expect(await git(['--git-dir', bare, 'for-each-ref'])).toBe('');
  }, 60_000);

  it('receive-pack whose server died mid-pack (EOF, broken stdout: SIGPIPE), swept at start', async () => {
    const storage = join(tempDir(), 'storage');
    const bare = await bareRepo(join(storage, 'group'), 'project.git');
    const { head, pack } = await newHistory();
    const proc = receivePack(bare);
    const ended = exited(proc.child);
    proc.child.stdin.write(
      Buffer.concat([commands(head, 'refs/heads/y'), pack.subarray(0, pack.length >> 1)]),
    );
    await waitUntil(() => quarantinesOf(bare).length === 1, 10_000, 'quarantine', 20);
    // The server is gone: its ends of git's pipes close.
    proc.child.stdout.destroy();
    proc.child.stdin.destroy();
    expect(await ended).toBe('SIGPIPE');
    expect(quarantinesOf(bare)).toHaveLength(1);

    const sweeper = new QuarantineSweeper({
      storages: { default: storage },
      logger: createLogger('quarantine-test', 'silent'),
      intervalMs: undefined,
    });
    onCleanup(() => sweeper.stop());
    sweeper.start();
    await waitUntil(() => quarantinesOf(bare).length === 0, 10_000, 'the sweep at start', 50);
    expect(await git(['--git-dir', bare, 'for-each-ref'])).toBe('');
  }, 60_000);

  it('keeps a quarantine another process reaches through its environment, from another folder', async () => {
    const storage = tempDir();
    const bare = await bareRepo(storage, 'held.git');
    const quarantine = join(bare, 'objects', 'tmp_objdir-incoming-Ab12Cd');
    mkdirSync(quarantine);
    const holder = spawn('sleep', ['30'], {
      cwd: storage,
      env: { ...GIT_ENV, GIT_QUARANTINE_PATH: quarantine },
      stdio: 'ignore',
    });
    const gone = exited(holder);
    onCleanup(() => {
      holder.kill('SIGKILL');
    });
    await waitUntil(() => holder.pid !== undefined, 2_000, 'holder', 10);
    expect(await sweepRepository(bare)).toBeUndefined();
    expect(existsSync(quarantine)).toBe(true);
    holder.kill('SIGKILL');
    await gone;
    expect(await sweepRepository(bare)).toEqual([quarantine]);
    expect(existsSync(quarantine)).toBe(false);
  });

  it('finds repositories at any depth of a storage, not inside them', async () => {
    const storage = tempDir();
    const a = await bareRepo(join(storage, '@hashed', 'ab', 'cd'), 'abcd.git');
    const b = await bareRepo(join(storage, 'group', 'sub'), 'project.git');
    expect(repositoriesIn(storage).sort()).toEqual([a, b].sort());
  });
});

const REPO = 'group/pushed.git';
const repository = { storage_name: 'default', relative_path: REPO, gl_repository: 'project-1' };

/** A hook program for the server's wrappers: marks that pre-receive runs, then waits for 30 s. */
function waitingHookProgram(): { program: string; started: string } {
  const dir = tempDir('quarantine-hook-program-');
  const started = join(dir, 'started');
  const program = join(dir, 'hook.mjs');
  writeFileSync(
    program,
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(started)}, '');\nsetTimeout(() => process.exit(1), 30000);\n`,
  );
  return { program, started };
}

/** A push whose call is cancelled while pre-receive waits; returns the bare repository. */
async function cancelledPush(settings: Record<string, unknown>): Promise<string> {
  const hook = waitingHookProgram();
  const g = await startGitaly(settings, { hookProgram: hook.program });
  await createRepo(g.storage, REPO);
  const bare = join(g.storage, REPO);
  const refsBefore = await git(['--git-dir', bare, 'for-each-ref']);
  const { head, pack } = await newHistory(8);
  const call = new RawCall(g.client, 'SSHReceivePack', authMetadata(g.token));
  call.send({ repository, gl_id: 'user-1', gl_username: 'alice' });
  await call.waitForStdout((out) => out.toString('latin1').endsWith('0000'));
  call.send({ stdin: Buffer.concat([commands(head, 'refs/heads/cancelled'), pack]) });
  await waitUntil(() => existsSync(hook.started), 15_000, 'pre-receive to run', 50);
  expect(quarantinesOf(bare)).toHaveLength(1);
  call.call.cancel();
  expect((await call.done).status.code).toBe(grpc.status.CANCELLED);
  // Cancellation ends the group within EOF grace + SIGTERM; the sweep follows the call.
  await new Promise((r) => setTimeout(r, 3_000));
  expect(await git(['--git-dir', bare, 'for-each-ref'])).toBe(refsBefore);
  return bare;
}

describe('SSHReceivePack cancelled while pre-receive waits (the bridge timed the tunnel out)', () => {
  it('leaves no quarantine behind', async () => {
    const bare = await cancelledPush({});
    expect(quarantinesOf(bare)).toEqual([]);
  }, 60_000);

  it('leaves it with quarantineSweep off, as git itself does when signalled', async () => {
    const bare = await cancelledPush({ quarantineSweep: false });
    expect(quarantinesOf(bare)).toHaveLength(1);
  }, 60_000);
});
