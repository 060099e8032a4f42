import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitResult, gitThroughBridge as runGit } from '../../bridge/test-support/git-through-bridge.js';
import {
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
  USER,
} from '../../bridge/test-support/harness.js';
import { buildGoProgram, GO_INSTALL_HINT, goToolchain, removeGoBuilds } from './go-build.js';
import { type GoServer, startServer } from './go-server.js';

// The Node bridge (yamux client, grpc-js over the backchannel, sidechannel registry) against an
// independent Gitaly-like peer written in Go on hashicorp/yamux and grpc-go: real git clones,
// pushes and archives through the bridge into the Go server.

const toolchain = goToolchain();
const SKIP_NOTE = `go toolchain not installed: ${GO_INSTALL_HINT}`;

let h: Harness;
let bridge: RunningBridge;
let bin = '';
const servers: GoServer[] = [];

async function goGitaly(...flags: string[]): Promise<string> {
  const server = await startServer(bin, [
    '-token-file',
    join(h.dir, 'gitaly_token'),
    '-storage',
    `default=${h.storage}`,
    ...flags,
  ]);
  servers.push(server);
  return `tcp://127.0.0.1:${server.port}`;
}

/** Real git with the tunnel helper as its ssh, into the bridge that fronts the fake Rails. */
async function gitThroughBridge(
  args: string[],
  opts: { protocol: 'h1' | 'h2'; framed: boolean; version?: 0 | 2 },
): Promise<GitResult> {
  return runGit(args, {
    ...opts,
    url: bridge.url,
    token: await h.token(USER.alice),
    cwd: h.dir,
    timeoutMs: 60_000,
  });
}

describe.skipIf(!toolchain)('bridge → Go Gitaly peer (hashicorp/yamux + grpc-go)', () => {
  let bare = '';
  beforeAll(async () => {
    bin = await buildGoProgram('gitaly-server');
    h = await startHarness();
    bare = h.createRepo(PROJECT, { 'big.bin': randomBytes(4 * 1024 * 1024), 'README.md': '# interop\n' });
    bridge = await h.startBridge({ railsUrl: h.rails.url, responseKeepaliveMs: 200 });
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await h?.close();
    await removeGoBuilds();
  });

  const allow = (project: string, address: string) =>
    h.rails.setPolicy(project, {
      kind: 'allow',
      gitalyAddress: address,
      relativePath: h.relativePath(PROJECT),
    });

  it.each([
    { protocol: 'h1', framed: false, version: 2 },
    { protocol: 'h2', framed: true, version: 2 },
    { protocol: 'h2', framed: true, version: 0 },
  ] as const)(
    'clones over $protocol (framed $framed, protocol v$version) through the sidechannel',
    async (mode) => {
      const address = await goGitaly();
      const project = `interop/clone-${mode.protocol}-${mode.version}`;
      allow(project, address);
      const dest = join(h.dir, `clone-${mode.protocol}-${mode.version}`);
      const r = await gitThroughBridge(
        ['clone', '--bare', `ssh://git@bridge.test/${project}.git`, dest],
        mode,
      );
      expect(r.stderr).not.toMatch(/fatal|error/i);
      expect(r.code).toBe(0);
      expect(git(['--git-dir', dest, 'rev-parse', 'main']).trim()).toBe(
        git(['--git-dir', bare, 'rev-parse', 'main']).trim(),
      );
      const log = servers.at(-1)?.log() ?? '';
      expect(log).toMatch(/SSHUploadPackWithSidechannel: .*sidechannel \d+: client confirmed with "ok"/);
      expect(log).toMatch(new RegExp(`git_protocol "${mode.version === 2 ? 'version=2' : ''}"`));
    },
  );

  it('pushes (bidi SSHReceivePack) and archives (bidi SSHUploadArchive) over the same backchannel', async () => {
    const address = await goGitaly();
    const project = 'interop/push';
    allow(project, address);
    const work = join(h.dir, 'push-work');
    const mode = { protocol: 'h2', framed: true } as const;
    expect((await gitThroughBridge(['clone', `ssh://git@bridge.test/${project}.git`, work], mode)).code).toBe(
      0,
    );
    git(['-C', work, 'commit', '--allow-empty', '-m', 'through the Go peer']);
    const push = await gitThroughBridge(['-C', work, 'push', 'origin', 'HEAD:refs/heads/interop'], mode);
    expect(push.code).toBe(0);
    expect(git(['--git-dir', bare, 'rev-parse', 'interop']).trim()).toBe(
      git(['-C', work, 'rev-parse', 'HEAD']).trim(),
    );
    const archive = await gitThroughBridge(
      ['archive', `--remote=ssh://git@bridge.test/${project}.git`, '--format=tar', 'main', 'README.md'],
      mode,
    );
    expect(archive.code).toBe(0);
    expect(archive.stdout).toContain('# interop');
    // One backchannel connection served all three RPCs.
    expect(
      servers
        .at(-1)
        ?.log()
        .match(/handshake step 1/g),
    ).toHaveLength(1);
  });

  it('serves the eager backchannel stream of Gitaly < 17.11 and still clones', async () => {
    const address = await goGitaly('-eager-backchannel');
    const project = 'interop/eager';
    allow(project, address);
    const dest = join(h.dir, 'clone-eager');
    const r = await gitThroughBridge(['clone', '--bare', `ssh://git@bridge.test/${project}.git`, dest], {
      protocol: 'h1',
      framed: true,
    });
    expect(r.code).toBe(0);
    expect(servers.at(-1)?.log()).toMatch(/SETTINGS/);
  });

  it('refuses a sidechannel with an id it never registered: the clone fails with a message', async () => {
    const address = await goGitaly('-wrong-sidechannel-id');
    const project = 'interop/wrong-id';
    allow(project, address);
    const r = await gitThroughBridge(
      ['clone', '--bare', `ssh://git@bridge.test/${project}.git`, join(h.dir, 'x')],
      {
        protocol: 'h2',
        framed: true,
      },
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/opennig sidechannel/);
    const refused = bridge.logs.lines.find((l) => l.msg === 'sidechannel refused');
    expect(String(refused?.reason)).toMatch(/ID \d+ not registered/);
  });
});

describe.skipIf(toolchain)('bridge → Go Gitaly peer', () => {
  it('needs the Go toolchain', ({ skip }) => skip(SKIP_NOTE));
});
