import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildGoProgram, GO_INSTALL_HINT, goToolchain, removeGoBuilds } from '../test/interop/go-build.js';
import {
  cleanup,
  createRepo,
  git,
  run,
  type StartedGitaly,
  startGitaly,
  tempDir,
  waitForNoGit,
} from './test-support/harness.js';

/**
 * An independent client: the Workhorse/gitlab-shell-like Go program of `test/interop` (hashicorp
 * yamux + grpc-go, written apart from our Node code) as git's SSH command against mock Gitaly.
 */

const toolchain = goToolchain();
const SKIP = `go toolchain not installed: ${GO_INSTALL_HINT}`;
const REPO = 'group/project.git';
const URL = `ssh://git@gitlab.example/${REPO}`;

let client = '';
let g: StartedGitaly;
let commit: string;

beforeAll(async () => {
  if (toolchain) client = await buildGoProgram('workhorse-client');
}, 300_000);
afterAll(() => removeGoBuilds());
afterEach(async () => {
  await cleanup();
  // Every test ends with its git processes gone (server side and client side).
  expect(await waitForNoGit(2000)).toEqual([]);
});

/** A hook program that lets every push through (this suite has no Rails). */
function passHook(): string {
  const path = join(tempDir(), 'hook-pass.mjs');
  writeFileSync(path, 'process.exit(0);\n');
  return path;
}

async function start(settings: Record<string, unknown> = {}) {
  g = await startGitaly(settings, { hookProgram: passHook() });
  commit = await createRepo(g.storage, REPO, {
    'README.md': '# go\n',
    'blob.bin': randomBytes(3 * 1024 * 1024),
  });
}

function sshEnv(extra: string[] = []): Record<string, string> {
  const args = [
    client,
    '-gitaly',
    `tcp://${g.address}`,
    '-token-file',
    g.config.tokenFile,
    '-storage',
    'default',
  ];
  return { GIT_SSH_COMMAND: [...args, ...extra].map((a) => `'${a}'`).join(' ') };
}

async function clone(version: string, extra: string[] = []) {
  const dest = join(tempDir(), 'clone');
  const res = await run('git', ['-c', `protocol.version=${version}`, 'clone', URL, dest], {
    env: sshEnv(extra),
  });
  return { dest, ...res };
}

describe.skipIf(!toolchain)(
  `workhorse-client (Go) → mock Gitaly${toolchain ? '' : ` (skipped: ${SKIP})`}`,
  () => {
    it.each(['2', '0'])('clones with protocol v%s through the sidechannel', async (version) => {
      await start();
      const res = await clone(version);
      expect(res.stderr).not.toMatch(/fatal|workhorse-client/);
      expect(res.code).toBe(0);
      expect(await git(['rev-parse', 'HEAD'], { cwd: res.dest })).toBe(commit);
      expect(g.gitaly.backchannelSessions).toBeLessThanOrEqual(1);
    });

    it('pushes with SSHReceivePack and runs git archive --remote over the backchannel', async () => {
      await start();
      const { dest } = await clone('2');
      writeFileSync(join(dest, 'pushed.txt'), 'pushed\n');
      await git(['add', '.'], { cwd: dest });
      await git(['commit', '-m', 'pushed'], { cwd: dest });
      const push = await run('git', ['push', 'origin', 'main'], { cwd: dest, env: sshEnv() });
      expect(push.code).toBe(0);
      expect(await git(['rev-parse', 'main'], { cwd: join(g.storage, REPO) })).toBe(
        await git(['rev-parse', 'HEAD'], { cwd: dest }),
      );
      const tar = join(tempDir(), 'out.tar');
      const archive = await run('git', ['archive', `--remote=${URL}`, '-o', tar, 'HEAD'], { env: sshEnv() });
      expect(archive.code).toBe(0);
      expect((await run('tar', ['tf', tar])).stdout.toString()).toContain('pushed.txt');
    });

    it('a plain (non-multiplexed) client gets Gitaly’s non-multiplexed error for upload-pack', async () => {
      await start();
      const res = await clone('2', ['-plain']);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(
        'code = Internal desc = opennig sidechannel: sidechannel: fail to extract mux session: non-multiplexed connection',
      );
    });

    it.each([
      ['eagerBackchannel', { eagerBackchannel: true }],
      ['yamuxFlavour libp2p', { yamuxFlavour: 'libp2p' }],
    ])('clones with %s', async (_name, settings) => {
      await start(settings);
      const res = await clone('2');
      expect(res.stderr).not.toMatch(/fatal|workhorse-client/);
      expect(res.code).toBe(0);
    });

    it('sidechannelWrongId: the Go client closes the unknown stream; the clone fails with Gitaly’s text', async () => {
      await start({ sidechannelWrongId: true });
      const res = await clone('2');
      expect(res.code).not.toBe(0);
      // hashicorp's Close is a FIN, so the server reads EOF (lib/gitaly resets instead: "connection reset").
      expect(res.stderr).toContain(
        'code = Internal desc = opennig sidechannel: sidechannel: receive confirmation: EOF',
      );
    });
  },
);
