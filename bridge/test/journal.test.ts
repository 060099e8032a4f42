import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setSigningSkewMs } from '../../lib/clock.js';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { waitUntil } from '../../test/helpers/poll.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import { GITALY_OVERLOADED_MESSAGE, GITALY_UNAVAILABLE_MESSAGE } from '../gitaly-errors.js';
import { gitThroughBridge as runGit } from '../test-support/git-through-bridge.js';
import {
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
  USER,
} from '../test-support/harness.js';

/**
 * The bridge's journal (`bridge/journal.ts`) and mock Gitaly's, with real git through a bridge in
 * front of the real mock cell and mock Gitaly; and mock Gitaly's faults as the git user reads them.
 */
let programs: CompiledPrograms;
let h: Harness;
let b: RunningBridge;
const bridgeJournal: JournalDraft[] = [];
const gitalyJournal: JournalDraft[] = [];

beforeAll(async () => {
  programs = await compilePrograms(['mock-gitaly/hook-main.ts']);
  h = await startHarness({
    hookProgram: programs.path('mock-gitaly/hook-main.ts'),
    gitaly: { cell: 'cell_eu0' },
    gitalyJournal: (e) => gitalyJournal.push(e),
  });
  h.createRepo(PROJECT);
  b = await h.startBridge(
    { cell: 'cell_eu0', shellListen: '127.0.0.1:0' },
    { journal: (e) => bridgeJournal.push(e) },
  );
}, 120_000);

afterAll(async () => {
  await h?.close();
  programs?.cleanup();
});

const REMOTE = `ssh://git@bridge.test/${PROJECT}.git`;

async function gitThroughBridge(args: string[], opts: { cwd?: string; url?: string } = {}) {
  const token = await h.token(USER.alice);
  return runGit(args, {
    protocol: 'h2',
    framed: true,
    url: opts.url ?? b.url,
    token,
    cwd: opts.cwd ?? h.dir,
  });
}

const since = (list: JournalDraft[], n: number) => list.slice(n);
/** The first entry of `list` from index `from` on that matches, once it has arrived. */
const waitFor = (list: JournalDraft[], from: number, pred: (e: JournalDraft) => boolean, what: string) =>
  waitUntil(() => since(list, from).find(pred), 5000, what);

describe('journal of a bridge and its mock Gitaly', () => {
  it('clone, push and archive: one bridge entry per tunnel and one Gitaly entry per RPC, in order', async () => {
    const b0 = bridgeJournal.length;
    const g0 = gitalyJournal.length;
    const dest = mkdtempSync(join(h.dir, 'clone-'));
    expect((await gitThroughBridge(['clone', REMOTE, dest])).code).toBe(0);
    writeFileSync(join(dest, 'journal.txt'), 'journaled\n');
    git(['add', '.'], dest);
    git(['commit', '--quiet', '-m', 'journal'], dest);
    expect((await gitThroughBridge(['push', 'origin', 'HEAD:refs/heads/journal'], { cwd: dest })).code).toBe(
      0,
    );
    const archive = await gitThroughBridge([
      'archive',
      `--remote=${REMOTE}`,
      '--output',
      join(h.dir, 'a.tar'),
      'main',
    ]);
    expect(archive.code).toBe(0);
    const tunnels = await waitUntil(
      () => {
        const t = since(bridgeJournal, b0).filter((e) => e.fields?.route !== 'proxy');
        return t.length >= 3 ? t : undefined;
      },
      5000,
      'three tunnel entries',
    );
    expect(tunnels.map((e) => e.endpoint)).toEqual([
      `POST /${PROJECT}.git/ssh-upload-pack`,
      `POST /${PROJECT}.git/ssh-receive-pack`,
      `POST /${PROJECT}.git/ssh-upload-archive`,
    ]);
    const [upload] = tunnels;
    expect(upload).toMatchObject({
      cell: 'cell_eu0',
      service: 'bridge',
      method: 'POST',
      status: 200,
      headers: {
        'gitlab-shell-api-request': '[redacted]',
        'gitlab-cells-response-framing': expect.any(String),
      },
      jwt: { 'gitlab-shell-api-request': { iss: 'gitlab-shell' } },
      fields: { listener: 'main', protocol: 'h2', project: PROJECT, outcome: 'ok', gl_id: USER.alice },
    });
    expect(upload?.bytesOut).toBeGreaterThan(0);
    const rpcs = await waitUntil(
      () => {
        const r = since(gitalyJournal, g0);
        return r.length >= 3 ? r : undefined;
      },
      5000,
      'three Gitaly entries',
    );
    expect(rpcs.map((e) => [e.endpoint, e.status, e.cell])).toEqual([
      ['/gitaly.SSHService/SSHUploadPackWithSidechannel', 'OK', 'cell_eu0'],
      ['/gitaly.SSHService/SSHReceivePack', 'OK', 'cell_eu0'],
      ['/gitaly.SSHService/SSHUploadArchive', 'OK', 'cell_eu0'],
    ]);
    expect(rpcs[1]?.fields).toMatchObject({
      gl_id: USER.alice,
      gl_repository: 'project-3',
      sidechannel: false,
    });
    expect(rpcs[1]?.bytesIn).toBeGreaterThan(0);
  });

  it('a bad token: the fast 404 is journaled; requests on the shell endpoint say so; proxied ones carry bytes', async () => {
    const b0 = bridgeJournal.length;
    const refused = await fetch(`${b.url}/${PROJECT}.git/ssh-upload-pack`, {
      method: 'POST',
      headers: { 'gitlab-shell-api-request': 'not.a.jwt', 'user-agent': 'journal-test' },
      body: 'never read',
    });
    expect(refused.status).toBe(404);
    await refused.text();
    const proxied = await fetch(`${b.shellUrl}/api/v4/internal/check?private_token=secret`);
    await proxied.text();
    const [bad, viaShell] = await waitUntil(
      () => {
        const e = since(bridgeJournal, b0);
        return e.length >= 2 ? e : undefined;
      },
      5000,
      'two entries',
    );
    expect(bad).toMatchObject({
      status: 404,
      fields: { listener: 'main', protocol: 'h1', outcome: 'policy' },
    });
    expect(bad?.headers?.['user-agent']).toBe('journal-test');
    expect(bad?.jwt).toBeUndefined();
    expect(viaShell).toMatchObject({
      endpoint: 'GET /api/v4/internal/check',
      query: { private_token: '[redacted]' },
      status: proxied.status,
      fields: { listener: 'shell', route: 'proxy' },
    });
    expect(viaShell?.bytesOut).toBeGreaterThan(0);
  });
});

describe('the listener an HTTP/2 tunnel came on', () => {
  it('a clone through the shell endpoint over h2 is journaled as listener shell', async () => {
    const b0 = bridgeJournal.length;
    const dest = mkdtempSync(join(h.dir, 'shell-clone-'));
    expect((await gitThroughBridge(['clone', REMOTE, dest], { url: b.shellUrl })).code).toBe(0);
    const tunnel = await waitFor(
      bridgeJournal,
      b0,
      (e) => e.fields?.route === 'ssh_upload_pack',
      'the tunnel',
    );
    expect(tunnel.fields).toMatchObject({ listener: 'shell', protocol: 'h2' });
  });
});

describe("mock Gitaly's faults as the git user reads them", () => {
  it.each([
    ['unavailable', GITALY_UNAVAILABLE_MESSAGE],
    ['resource-exhausted', GITALY_OVERLOADED_MESSAGE],
  ] as const)(
    "%s: the clone fails with gitlab-shell's words, and both journals say why",
    async (kind, message) => {
      const g0 = gitalyJournal.length;
      const b0 = bridgeJournal.length;
      h.gitaly.server.world.faults.add({ kind, rpc: 'SSHUploadPackWithSidechannel', times: 1 });
      const failed = await gitThroughBridge(['clone', REMOTE, mkdtempSync(join(h.dir, `${kind}-`))]);
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toContain(message);
      const entry = await waitFor(gitalyJournal, g0, (e) => e.fault !== undefined, 'the fault entry');
      expect(entry.fault).toMatchObject({ kind });
      const tunnel = await waitFor(
        bridgeJournal,
        b0,
        (e) => e.fields?.route === 'ssh_upload_pack',
        'the tunnel',
      );
      expect(tunnel).toMatchObject({ status: 200, fields: { grpc_code: expect.anything() } });
      expect(tunnel.fields?.outcome).not.toBe('ok');
      expect((await gitThroughBridge(['clone', REMOTE, mkdtempSync(join(h.dir, `${kind}-ok-`))])).code).toBe(
        0,
      );
    },
  );
});

describe('the signing clock (`world clockSkew`)', () => {
  /** A clone with a shell token signed on the real clock while the bridge's signers run `skewMs` off. */
  async function skewedClone(skewMs: number) {
    const token = await h.token(USER.alice);
    setSigningSkewMs(skewMs);
    try {
      const dest = mkdtempSync(join(h.dir, 'skewed-'));
      return await runGit(['clone', REMOTE, dest], {
        protocol: 'h2',
        framed: true,
        url: b.url,
        token,
        cwd: h.dir,
      });
    } finally {
      setSigningSkewMs(0);
    }
  }

  it('the Gitaly token follows lib/clock.ts: 60 s behind, Gitaly (±30 s) refuses it', async () => {
    const g0 = gitalyJournal.length;
    expect((await skewedClone(-60_000)).code).not.toBe(0);
    const refused = await waitFor(gitalyJournal, g0, () => true, 'the refused RPC');
    expect(refused.status).toBe('PERMISSION_DENIED');
  });

  it('the workhorse JWT follows lib/clock.ts: 120 s behind, Rails refuses the pre-authorization', async () => {
    const g0 = gitalyJournal.length;
    const b0 = bridgeJournal.length;
    expect((await skewedClone(-120_000)).code).not.toBe(0);
    const tunnel = await waitFor(
      bridgeJournal,
      b0,
      (e) => e.fields?.route === 'ssh_upload_pack',
      'the tunnel',
    );
    expect(tunnel.status).not.toBe(200);
    expect(since(gitalyJournal, g0)).toEqual([]);
    expect((await gitThroughBridge(['clone', REMOTE, mkdtempSync(join(h.dir, 'unskewed-'))])).code).toBe(0);
  });

  it("the shell JWT's expiry is judged by the bridge's own clock: 180 s ahead, 404 Not found", async () => {
    const b0 = bridgeJournal.length;
    const result = await skewedClone(180_000);
    expect(result.code).not.toBe(0);
    const tunnel = await waitFor(
      bridgeJournal,
      b0,
      (e) => e.fields?.route === 'ssh_upload_pack',
      'the tunnel',
    );
    expect(tunnel).toMatchObject({ status: 404, fields: { reason: 'shell token expired' } });
  });

  it('journals whether the body ended before the answer and its last bytes', async () => {
    const b0 = bridgeJournal.length;
    expect((await gitThroughBridge(['clone', REMOTE, mkdtempSync(join(h.dir, 'tail-'))])).code).toBe(0);
    const tunnel = await waitFor(
      bridgeJournal,
      b0,
      (e) => e.fields?.route === 'ssh_upload_pack',
      'the tunnel',
    );
    expect(tunnel.fields).toMatchObject({
      body_end: expect.stringMatching(/^(before-exit|open-at-exit)$/),
      stdin_tail: expect.stringMatching(/done\n/),
    });
  });
});
