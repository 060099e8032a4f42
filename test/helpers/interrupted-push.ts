import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../../lib/proto.js';
import { waitUntil } from './poll.js';
import { gitChildrenOf } from './procs.js';
import { runOk } from './run.js';
import type { RunningStack } from './stack.js';

/** The author and committer of the commits the suites make. */
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'E2E',
  GIT_AUTHOR_EMAIL: 'e2e@example.com',
  GIT_COMMITTER_NAME: 'E2E',
  GIT_COMMITTER_EMAIL: 'e2e@example.com',
};

/** A new branch in the clone at `dir` with one commit of `mib` MiB of incompressible files. */
export async function commitRandomFiles(dir: string, branch: string, mib: number): Promise<void> {
  const env = { ...process.env, ...GIT_IDENTITY };
  await runOk('git', ['-C', dir, 'checkout', '-q', '-b', branch]);
  await mkdir(join(dir, 'big'));
  for (let i = 0; i < mib; i++) writeFileSync(join(dir, 'big', `r${i}.bin`), randomBytes(1024 * 1024));
  await runOk('git', ['-C', dir, 'add', 'big'], { env });
  await runOk('git', ['-C', dir, 'commit', '-q', '-m', 'never lands'], { env });
}

/**
 * Pushes `branch` as `user` with the upload throttled to 2 MiB/s, SIGKILLs the client's process
 * group once git reports writing objects (so the kill lands in the middle of the pack), then waits
 * up to `boundMs` until no mock Gitaly of the stack has a git child left.
 */
export async function killPushMidTransfer(
  stack: RunningStack,
  user: string,
  dir: string,
  branch: string,
  boundMs: number,
): Promise<void> {
  const throttle = join(projectRoot(), 'test', 'helpers', 'throttled-ssh.mjs');
  const child = spawn('git', ['-C', dir, 'push', '--progress', 'origin', branch], {
    env: {
      ...stack.gitEnv(user),
      ...GIT_IDENTITY,
      GIT_SSH_COMMAND: `${process.execPath} ${throttle} 2097152 ${stack.sshCommand(user)}`,
      GIT_SSH_VARIANT: 'ssh',
    },
    detached: true,
  });
  await new Promise<void>((resolve) => {
    child.stderr.on('data', (c: Buffer) => {
      if (/Writing objects: +[1-9]/.test(c.toString())) resolve();
    });
    child.once('exit', () => resolve());
  });
  if (child.exitCode !== null || child.signalCode !== null)
    throw new Error(`git push ended (${child.exitCode ?? child.signalCode}) before it could be killed`);
  process.kill(-(child.pid as number), 'SIGKILL');
  await new Promise((r) => child.once('close', r));
  const gitalyPids = Object.entries(stack.json.pids)
    .filter(([name]) => name.startsWith('gitaly-'))
    .map(([, pid]) => pid);
  await waitUntil(
    () => gitChildrenOf(gitalyPids).length === 0,
    boundMs,
    'no git child of a mock Gitaly',
    100,
  );
}
