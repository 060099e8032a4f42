import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseFrame } from '../../lib/framing.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import { GITALY_UNAVAILABLE_MESSAGE } from '../gitaly-errors.js';
import { gitThroughBridge } from '../test-support/git-through-bridge.js';
import { flushCount, mainOid, packAfterNak, wantDone } from '../test-support/git-wire.js';
import {
  BIG_PROJECT,
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
  USER,
} from '../test-support/harness.js';
import { errorOf, FRAMED, payloadOf } from '../test-support/response-frames.js';
import { openTunnel, type Protocol } from '../test-support/tunnel-client.js';
import { gitGone, waitUntil } from '../test-support/waits.js';

// The bridge's Gitaly modes against the real mock Gitaly: the sidechannel under load, the legacy
// `stream` mode against an old (legacyUploadPack) and a current Gitaly, and a Gitaly that dies.

const UPLOAD = `/${PROJECT}.git/ssh-upload-pack`;

let h: Harness;
let legacy: Harness;
let programs: CompiledPrograms;
beforeAll(async () => {
  programs = await compilePrograms(['mock-gitaly/main.ts', 'mock-gitaly/hook-main.ts']);
  h = await startHarness();
  h.createRepo(PROJECT);
  h.createRepo(BIG_PROJECT, { 'big.bin': randomBytes(16 * 1024 * 1024) });
  legacy = await startHarness({ gitaly: { legacyUploadPack: true } });
  legacy.createRepo(PROJECT);
});
afterAll(async () => {
  await h?.close();
  await legacy?.close();
  programs?.cleanup();
});

async function gitClone(world: Harness, bridge: RunningBridge, dest: string) {
  const clone = ['clone', '--bare', `ssh://git@bridge.test/${PROJECT}.git`, dest];
  const token = await world.token(USER.alice);
  return gitThroughBridge(clone, {
    url: bridge.url,
    token,
    protocol: 'h2',
    framed: true,
    cwd: world.dir,
    version: 0,
  });
}

/** One complete v0 fetch of `main` through a tunnel; resolves with the pack (SHA-1 trailer checked). */
async function fetchPack(protocol: Protocol, bridge: RunningBridge, token: string): Promise<Buffer> {
  const t = openTunnel(protocol, bridge.url, UPLOAD, { 'gitlab-shell-api-request': token });
  const advert = await t.waitFor((buf) => flushCount(buf) === 1, 60_000);
  t.end(wantDone(mainOid(advert) as string));
  expect(await t.done).toBe(true);
  const pack = packAfterNak(t.received()) as Buffer;
  expect(pack.subarray(0, 4).toString()).toBe('PACK');
  const sum = createHash('sha1').update(pack.subarray(0, -20)).digest();
  expect(sum.equals(pack.subarray(-20))).toBe(true);
  return pack;
}

describe('sidechannel mode (the default) against mock Gitaly ≥ 17.8', () => {
  it('serves 200 concurrent clones over one backchannel connection with zero errors', async () => {
    const bridge = await h.startBridge({ maxTunnelsPerUser: 0, maxTunnels: 0 });
    const token = await h.token(USER.alice);
    const started = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => fetchPack(i % 2 === 0 ? 'h2' : 'h1', bridge, token)),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason)).slice(0, 3)).toEqual([]);
    expect(h.gitaly.server.backchannelSessions).toBe(1);
    const tunnels = bridge.logs.tunnels();
    expect(tunnels).toHaveLength(200);
    expect(tunnels.every((l) => l.outcome === 'ok' && l.gitaly_transport === 'sidechannel')).toBe(true);
    expect(performance.now() - started).toBeLessThan(60_000);
    await gitGone();
  }, 90_000);
});

describe('stream mode (gitalyUploadPack: "stream")', () => {
  it('clones from a Gitaly that still serves SSHUploadPack (legacyUploadPack)', async () => {
    const bridge = await legacy.startBridge({ gitalyUploadPack: 'stream' });
    const r = await gitClone(legacy, bridge, join(legacy.dir, 'stream-clone'));
    expect(r.stderr).not.toMatch(/fatal|error/i);
    expect(r.code).toBe(0);
    expect(bridge.logs.tunnels().at(-1)).toMatchObject({ outcome: 'ok', gitaly_transport: 'stream' });
    expect(legacy.gitaly.logs.lines.some((l) => l.rpc === 'SSHUploadPack' && l.msg === 'rpc finished')).toBe(
      true,
    );
  });

  it('against Gitaly ≥ 17.8 fails with a message that names the setting', async () => {
    const bridge = await h.startBridge({ gitalyUploadPack: 'stream' });
    const t = openTunnel('h2', bridge.url, UPLOAD, {
      'gitlab-shell-api-request': await h.token(USER.alice),
      ...FRAMED,
    });
    expect(await t.done).toBe(true);
    expect(errorOf(t.received())).toEqual({
      code: 'GITALY_UNIMPLEMENTED',
      message: expect.stringMatching(
        /SSHUploadPack \(removed in Gitaly 17\.8\).*set gitalyUploadPack to "sidechannel"/,
      ),
    });
    const r = await gitClone(h, bridge, join(h.dir, 'stream-vs-new'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/gitalyUploadPack/);
    expect(bridge.logs.tunnels().at(-1)).toMatchObject({ grpc_code: 'UNIMPLEMENTED', outcome: 'system' });
  });
});

describe('a Gitaly that dies mid-clone', () => {
  let gitaly: ChildProcess | undefined;
  afterAll(() => {
    gitaly?.kill('SIGKILL');
  });

  /** mock Gitaly as its own process on the harness's storage; resolves with its address. */
  async function spawnGitaly(): Promise<string> {
    const config = join(h.dir, 'spawned-gitaly.json');
    writeFileSync(
      config,
      JSON.stringify({
        listen: '127.0.0.1:0',
        storages: { default: h.storage },
        tokenFile: join(h.dir, 'gitaly_token'),
        gitlabUrl: h.cell.url,
        gitlabSecretFile: join(h.dir, 'gitlab_shell_secret'),
        logLevel: 'info',
      }),
    );
    const child = spawn(process.execPath, [programs.path('mock-gitaly/main.ts'), '--config', config], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    gitaly = child;
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /"address":"([^"]+)".*"msg":"listening"/.exec(out);
        if (m) resolve(`tcp://${m[1]}`);
      });
      child.once('exit', (code) => reject(new Error(`mock Gitaly exited ${code}: ${out}`)));
    });
  }

  it('ends the tunnel within 5 s with a message the user can read', async () => {
    const address = await spawnGitaly();
    h.rails.setPolicy('dies/mid-clone', {
      kind: 'allow',
      gitalyAddress: address,
      relativePath: h.relativePath(BIG_PROJECT),
    });
    const bridge = await h.startBridge({ railsUrl: h.rails.url });
    const t = openTunnel('h2', bridge.url, '/dies/mid-clone.git/ssh-upload-pack', {
      'gitlab-shell-api-request': await h.token(USER.dave),
      ...FRAMED,
    });
    const advert = await t.waitFor((buf) => flushCount(payloadOf(buf, ResponseFrame.stdout)) === 1);
    t.write(wantDone(mainOid(payloadOf(advert, ResponseFrame.stdout)) as string));
    await t.waitFor((buf) => payloadOf(buf, ResponseFrame.stdout).length > 512 * 1024, 10_000);
    t.pause();
    gitaly?.kill('SIGKILL');
    const killed = performance.now();
    t.resume();
    expect(await t.done).toBe(true);
    expect(performance.now() - killed).toBeLessThan(5000);
    const error = errorOf(t.received());
    // gitlab-shell's words for a Gitaly that went away, whichever leg noticed first.
    expect(error).toEqual({ code: 'GITALY_UNAVAILABLE', message: GITALY_UNAVAILABLE_MESSAGE });
    await waitUntil(() => bridge.logs.tunnels().length === 1, 2000, 'tunnel log');
    expect(bridge.logs.tunnels()[0]).toMatchObject({ outcome: 'system' });
    expect(git(['--git-dir', join(h.storage, h.relativePath(BIG_PROJECT)), 'rev-parse', 'main'])).toMatch(
      /^[0-9a-f]{40}/,
    );
  });
});
