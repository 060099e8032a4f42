import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GIT_ENV,
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
} from '../../bridge/test-support/harness.js';
import { buildGoProgram, GO_INSTALL_HINT, goToolchain, removeGoBuilds } from './go-build.js';
import { type GoServer, startServer } from './go-server.js';

// Real git over smart HTTP straight into the Node bridge (Workhorse's git routes), whose
// pre-authorization is answered by the real mock cell (Rails) and whose Gitaly is the independent
// Go peer's SmartHTTPService (hashicorp/yamux + grpc-go): InfoRefs*, PostUploadPackWithSidechannel
// and PostReceivePack. The harness's own mock Gitaly still runs but must see none of these calls.

const toolchain = goToolchain();
const SKIP_NOTE = `go toolchain not installed: ${GO_INSTALL_HINT}`;
const ALICE = 'alice:alice-password';

let h: Harness;
let bridge: RunningBridge;
let goGitaly: GoServer | undefined;
let bare = '';

interface Run {
  code: number | null;
  stderr: string;
}

function runGit(args: string[], cwd = h.dir): Promise<Run> {
  const child = spawn('git', args, {
    cwd,
    env: { ...GIT_ENV, GIT_TERMINAL_PROMPT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

const url = () => `http://${ALICE}@${new URL(bridge.url).host}/${PROJECT}.git`;
const fresh = (name: string) => join(mkdtempSync(join(h.dir, `${name}-`)), 'repo');
const goLog = () => goGitaly?.log() ?? '';
/** SmartHTTPService calls the harness's mock Gitaly logged (there must be none). */
const mockGitalySmartHttpCalls = () =>
  h.gitaly.logs.lines.filter((l) => /^(InfoRefs|PostUploadPack|PostReceivePack)/.test(String(l.rpc ?? '')));

afterAll(removeGoBuilds);

describe.skipIf(!toolchain)('git over HTTP: bridge → Go Gitaly peer’s SmartHTTPService', () => {
  beforeAll(async () => {
    const bin = await buildGoProgram('gitaly-server');
    h = await startHarness({
      cellGitaly: async ({ storage, tokenFile }) => {
        goGitaly = await startServer(bin, ['-token-file', tokenFile, '-storage', `default=${storage}`]);
        return `tcp://127.0.0.1:${goGitaly.port}`;
      },
    });
    // 3 MiB of random bytes: the pack spans many sidechannel frames and yamux windows.
    bare = h.createRepo(PROJECT, { 'big.bin': randomBytes(3 * 1024 * 1024), 'README.md': '# go http\n' });
    bridge = await h.startBridge();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await goGitaly?.stop();
  });

  it.each(['0', '2'])(
    'clones with protocol v%s: info/refs and upload-pack served by the Go peer',
    async (v) => {
      const dest = fresh(`clone-v${v}`);
      const clone = await runGit(['-c', `protocol.version=${v}`, 'clone', url(), dest]);
      expect(clone.stderr).not.toMatch(/fatal|error/i);
      expect(clone.code).toBe(0);
      expect(git(['rev-parse', 'HEAD'], dest).trim()).toBe(
        git(['--git-dir', bare, 'rev-parse', 'main']).trim(),
      );
      const log = goLog();
      expect(log).toMatch(/InfoRefsUploadPack: ok after/);
      expect(log).toMatch(/PostUploadPackWithSidechannel: sidechannel \d+: client confirmed with "ok"/);
      expect(log).toMatch(/PostUploadPackWithSidechannel: ok after/);
      expect(log).toMatch(
        new RegExp(`PostUploadPackWithSidechannel: repo .*git_protocol "${v === '2' ? 'version=2' : ''}"`),
      );
      expect(mockGitalySmartHttpCalls()).toEqual([]);
    },
    60_000,
  );

  it('a shallow clone (deepen) is served', async () => {
    const dest = fresh('shallow');
    const clone = await runGit(['-c', 'protocol.version=0', 'clone', '--depth=1', url(), dest]);
    expect(clone.code).toBe(0);
    expect(git(['rev-parse', '--is-shallow-repository'], dest).trim()).toBe('true');
  }, 60_000);

  it.each(['0', '2'])(
    'pushes with protocol v%s through PostReceivePack (gl_id from Rails’ answer)',
    async (v) => {
      const dest = fresh(`push-v${v}`);
      expect((await runGit(['clone', url(), dest])).code).toBe(0);
      writeFileSync(join(dest, `v${v}.txt`), `${v}\n`);
      git(['add', '.'], dest);
      git(['commit', '-qm', `over http v${v}`], dest);
      const push = await runGit(
        ['-c', `protocol.version=${v}`, 'push', 'origin', `HEAD:refs/heads/go-http-v${v}`],
        dest,
      );
      expect(push.stderr).not.toMatch(/fatal|error/i);
      expect(push.code).toBe(0);
      expect(git(['--git-dir', bare, 'rev-parse', `go-http-v${v}`]).trim()).toBe(
        git(['rev-parse', 'HEAD'], dest).trim(),
      );
      const log = goLog();
      expect(log).toMatch(/InfoRefsReceivePack: ok after/);
      expect(log).toMatch(
        /PostReceivePack: repo .*gl_id "user-2", gl_repository "project-\d+", gl_username "alice"/,
      );
      expect(log).toMatch(/PostReceivePack: ok after/);
      expect(mockGitalySmartHttpCalls()).toEqual([]);
    },
    60_000,
  );
});

describe.skipIf(!toolchain)('git over HTTP: an overloaded Go peer (grpc-go’s LimitError detail)', () => {
  let busyWorld: Harness;
  let busyBridge: RunningBridge;
  let busyGitaly: GoServer | undefined;
  beforeAll(async () => {
    const bin = await buildGoProgram('gitaly-server');
    busyWorld = await startHarness({
      cellGitaly: async ({ storage, tokenFile }) => {
        busyGitaly = await startServer(bin, [
          '-token-file',
          tokenFile,
          '-storage',
          `default=${storage}`,
          '-limit-error',
          'PostUploadPackWithSidechannel',
          '-limit-error',
          'PostReceivePack',
        ]);
        return `tcp://127.0.0.1:${busyGitaly.port}`;
      },
    });
    busyWorld.createRepo(PROJECT);
    busyBridge = await busyWorld.startBridge();
  }, 120_000);
  afterAll(async () => {
    await busyWorld?.close();
    await busyGitaly?.stop();
  });

  it.each([
    ['upload-pack', '0047ERR GitLab is currently unable to handle this request due to load.\n'],
    [
      'receive-pack',
      '0023\x01001aunpack server is busy\n00000044\x02GitLab is currently unable to handle this request due to load.\n0000',
    ],
  ])('%s: the bridge writes Workhorse’s busy answer', async (service, expected) => {
    const res = await fetch(`${busyBridge.url}/${PROJECT}.git/git-${service}`, {
      method: 'POST',
      headers: {
        'content-type': `application/x-git-${service}-request`,
        authorization: `Basic ${Buffer.from(ALICE).toString('base64')}`,
      },
      body: '0000',
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).toString('latin1')).toBe(expected);
    expect(busyGitaly?.log()).toMatch(/-limit-error: answering Unavailable with a LimitError detail/);
  });
});

describe.skipIf(toolchain)('git over HTTP: bridge → Go Gitaly peer', () => {
  it('needs the Go toolchain', ({ skip }) => skip(SKIP_NOTE));
});
