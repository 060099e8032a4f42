import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBodyData, encodeFrame, ResponseFrame } from '../../lib/framing.js';
import { jwtKey, verifyWorkhorseJwt } from '../../lib/jwt.js';
import { type EndlessGitaly, startEndlessGitaly } from '../test-support/endless-gitaly.js';
import {
  flushCount,
  lsRefs,
  mainOid,
  PROTOCOL_V2,
  packAfterNak,
  wantDone,
} from '../test-support/git-wire.js';
import {
  BIG_PROJECT,
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
  USER,
} from '../test-support/harness.js';
import {
  BODY_FRAMED,
  errorOf,
  exitStatusOf,
  FRAMED,
  frames,
  payloadOf,
} from '../test-support/response-frames.js';
import { openTunnel, type Protocol } from '../test-support/tunnel-client.js';
import { gitGone, liveGit, waitUntil } from '../test-support/waits.js';

/** The big repository's one file: random, so its pack is as big and outlasts every buffer on the way. */
const BIG_BLOB_BYTES = 32 * 1024 * 1024;
const UPLOAD = `/${PROJECT}.git/ssh-upload-pack`;
const BIG_UPLOAD = `/${BIG_PROJECT}.git/ssh-upload-pack`;

let h: Harness;
/** In front of the real mock cell. */
let b: RunningBridge;
/** In front of the fake Rails, for answers the real cell cannot give. */
let f: RunningBridge;
let endless: EndlessGitaly;
beforeAll(async () => {
  h = await startHarness();
  h.createRepo(PROJECT);
  h.createRepo(BIG_PROJECT, { 'big.bin': randomBytes(BIG_BLOB_BYTES) });
  endless = await startEndlessGitaly();
  b = await h.startBridge({ responseKeepaliveMs: 150 });
  f = await h.startBridge({ responseKeepaliveMs: 150, railsUrl: h.rails.url });
});
afterAll(async () => {
  await h?.close();
  await endless?.close();
});

/** How mock Gitaly ended the call of one correlation id (`ok`, `failed`, `cancelled`, …). */
function gitalyOutcome(id: string): unknown {
  return h.gitaly.logs.correlated(id).find((l) => l.msg === 'rpc finished')?.outcome;
}

async function tunnelLog(id: string, via = b): Promise<Record<string, unknown>> {
  await waitUntil(() => via.logs.tunnels().some((l) => l.correlation_id === id), 2000, `tunnel log of ${id}`);
  return via.logs.tunnels().find((l) => l.correlation_id === id) as Record<string, unknown>;
}

async function bytesOut(): Promise<number> {
  const values = (await b.bridge.metrics.bytes.get()).values;
  return values.filter((v) => v.labels.direction === 'out').reduce((sum, v) => sum + v.value, 0);
}

describe.each(['h1', 'h2'] as const)('tunnel to the real mock Gitaly over %s', (protocol: Protocol) => {
  const open = async (
    path: string,
    headers: Record<string, string> = {},
    glId: string = USER.alice,
    via = b,
  ) => openTunnel(protocol, via.url, path, { 'gitlab-shell-api-request': await h.token(glId), ...headers });
  /** Through the bridge in front of the fake Rails. */
  const openFake = (path: string, headers: Record<string, string> = {}) => open(path, headers, USER.alice, f);

  it('is full duplex: each ls-refs request is answered by git before the next is sent', async () => {
    const id = `pingpong-${protocol}`;
    const t = await open(UPLOAD, { ...PROTOCOL_V2, 'x-request-id': id });
    expect(await t.status).toBe(200);
    expect((await t.headers)['x-request-id']).toBe(id);
    const advert = await t.waitFor((buf) => flushCount(buf) === 1);
    // Gitaly's default config options reach git: filters are advertised.
    expect(advert.toString()).toContain('version 2');
    expect(advert.toString()).toMatch(/fetch=.*filter/);
    let sent = 0;
    for (let i = 1; i <= 5; i++) {
      const request = lsRefs(i % 2 ? [] : ['refs/heads/']);
      t.write(request);
      sent += request.length;
      await t.waitFor((buf) => flushCount(buf) === 1 + i);
    }
    const oid = mainOid(t.received());
    expect(oid).toBe(
      git(['--git-dir', join(h.storage, h.relativePath(PROJECT)), 'rev-parse', 'main']).trim(),
    );
    t.end();
    expect(await t.done).toBe(true);
    expect(gitalyOutcome(id)).toBe('ok');
    expect(await tunnelLog(id)).toMatchObject({
      route: 'ssh_upload_pack',
      project: PROJECT,
      gl_id: 'user-2',
      protocol,
      outcome: 'ok',
      bytes_in: sent,
      bytes_out: t.received().length,
    });
    expect(b.logs.text()).not.toContain(await h.token());
  });

  it('pre-authorizes with the client headers and the Workhorse identity; Gitaly gets protocol, config options and correlation id', async () => {
    const id = `meta-${protocol}`;
    h.rails.setPolicy(`meta/${protocol}`, {
      kind: 'allow',
      relativePath: h.relativePath(PROJECT),
      gitConfigOptions: ['uploadpack.allowFilter=false'],
    });
    const t = await openFake(`/meta/${protocol}.git/ssh-upload-pack?x=1`, {
      ...PROTOCOL_V2,
      authorization: 'GL-Geo abc:def',
      'x-request-id': id,
      'content-type': 'application/octet-stream',
    });
    expect(await t.status).toBe(200);
    const advert = (await t.waitFor((buf) => flushCount(buf) === 1)).toString();
    expect(advert).toContain('version 2');
    // The request's config option overrides Gitaly's default: no filter capability any more.
    expect(advert).toMatch(/fetch=/);
    expect(advert).not.toMatch(/filter/);
    t.end();
    expect(await t.done).toBe(true);
    expect(gitalyOutcome(id)).toBe('ok');

    const pre = h.rails.preauths().find((r) => r.headers['x-request-id'] === id);
    expect(pre?.method).toBe('POST');
    expect(pre?.url).toBe(`/meta/${protocol}.git/ssh-upload-pack?x=1`);
    expect(pre?.body.length).toBe(0);
    expect(pre?.headers.authorization).toBe('GL-Geo abc:def');
    expect(pre?.headers['git-protocol']).toBe('version=2');
    expect(pre?.headers['content-type']).toBeUndefined();
    expect(pre?.headers['transfer-encoding']).toBeUndefined();
    expect(pre?.headers['gitlab-workhorse']).toMatch(/bridge/);
    const wh = await verifyWorkhorseJwt(
      jwtKey(h.workhorseSecret),
      pre?.headers['gitlab-workhorse-api-request'] as string,
    );
    expect(wh.ok).toBe(true);
    expect(f.logs.text()).not.toContain(h.gitalyToken);
  });

  it('tunnels a Geo request that Rails accepts, with the gl_id Rails returns', async () => {
    h.rails.setPolicy(`geo/${protocol}`, { kind: 'allow', relativePath: h.relativePath(PROJECT) });
    const t = openTunnel(protocol, f.url, `/geo/${protocol}.git/ssh-upload-pack`, {
      authorization: 'GL-Geo node1:valid',
      ...PROTOCOL_V2,
      'x-request-id': `geo-${protocol}`,
    });
    expect(await t.status).toBe(200);
    await t.waitFor((buf) => flushCount(buf) === 1);
    t.end();
    expect(await t.done).toBe(true);
    const pre = h.rails.preauths().find((r) => r.url === `/geo/${protocol}.git/ssh-upload-pack`);
    expect(pre?.headers.authorization).toBe('GL-Geo node1:valid');
    expect(await tunnelLog(`geo-${protocol}`, f)).toMatchObject({ gl_id: 'key-1', outcome: 'ok' });
  });

  it('answers 500 before the 200 when Rails names a Gitaly address Gitaly clients cannot dial', async () => {
    h.rails.setPolicy(`unix/${protocol}`, { kind: 'allow', gitalyAddress: 'http://127.0.0.1:9999' });
    const t = await openFake(`/unix/${protocol}.git/ssh-upload-pack`, { 'x-request-id': `unix-${protocol}` });
    expect(await t.status).toBe(500);
    expect(await t.done).toBe(true);
    expect(t.received().toString()).toBe('Internal Server Error\n');
    const line = await tunnelLog(`unix-${protocol}`, f);
    expect(line).toMatchObject({ outcome: 'system', error_code: 'BRIDGE_GITALY_ADDRESS' });
    expect(String(line.reason)).toMatch(
      /uses scheme "http" \(expected tcp:\/\/host:port, tls:\/\/host:port or unix:\/path\)/,
    );
  });

  it('reports an unreachable Gitaly in-band after the 200', async () => {
    h.rails.setPolicy(`down/${protocol}`, { kind: 'allow', gitalyAddress: 'tcp://127.0.0.1:1' });
    const compat = await openFake(`/down/${protocol}.git/ssh-upload-pack`);
    expect(await compat.status).toBe(200);
    expect(await compat.done).toBe(true);
    expect(compat.received().toString()).toBe('Internal Server Error\n');
    const framed = await openFake(`/down/${protocol}.git/ssh-upload-pack`, FRAMED);
    expect(await framed.done).toBe(true);
    expect(errorOf(framed.received())).toMatchObject({ code: 'GITALY_UNAVAILABLE' });
  });

  it("reports mock Gitaly's refusals as Gitaly errors: wrong token, forbidden config option", async () => {
    h.rails.setPolicy(`badtoken/${protocol}`, {
      kind: 'allow',
      relativePath: h.relativePath(PROJECT),
      gitalyToken: 'wrong',
    });
    const t = await openFake(`/badtoken/${protocol}.git/ssh-upload-pack`, FRAMED);
    expect(await t.done).toBe(true);
    expect(errorOf(t.received())).toMatchObject({ code: 'GITALY_PERMISSION_DENIED' });

    h.rails.setPolicy(`hookspath/${protocol}`, {
      kind: 'allow',
      relativePath: h.relativePath(PROJECT),
      gitConfigOptions: ['core.hooksPath=/tmp'],
    });
    const u = await openFake(`/hookspath/${protocol}.git/ssh-upload-pack`, FRAMED);
    expect(await u.done).toBe(true);
    expect(errorOf(u.received())).toMatchObject({
      code: 'GITALY_INVALID_ARGUMENT',
      message: expect.stringMatching(/core\.hooksPath/),
    });
  });

  it('compatible mode interleaves git stderr and appends "Internal Server Error" when git fails', async () => {
    const t = await open(UPLOAD);
    expect(await t.status).toBe(200);
    const advert = await t.waitFor((buf) => flushCount(buf) === 1);
    // Protocol v0: upload-pack advertises its refs, then expects pkt-lines.
    expect(mainOid(advert)).toMatch(/^[0-9a-f]{40}$/);
    t.write('xxxx\n');
    expect(await t.done).toBe(true);
    // The request body was never ended: the exchange is closed after the response.
    await t.closed;
    const body = t.received().toString('latin1');
    expect(body.startsWith(advert.toString('latin1'))).toBe(true);
    expect(body.slice(advert.length)).toBe(
      'fatal: protocol error: bad line length character: xxxx\nInternal Server Error\n',
    );
  });

  it('framed mode carries git stderr, the exit status and the error separately', async () => {
    const t = await open(UPLOAD, FRAMED);
    expect((await t.headers)['gitlab-cells-response-framing']).toBe('v1');
    await t.waitFor((buf) => flushCount(payloadOf(buf, ResponseFrame.stdout)) === 1);
    t.write('xxxx\n');
    expect(await t.done).toBe(true);
    const body = t.received();
    expect(mainOid(payloadOf(body, ResponseFrame.stdout))).toMatch(/^[0-9a-f]{40}$/);
    expect(payloadOf(body, ResponseFrame.stderr).toString()).toBe(
      'fatal: protocol error: bad line length character: xxxx\n',
    );
    expect(errorOf(body)).toMatchObject({ code: 'GITALY_INTERNAL', message: expect.stringMatching(/128/) });
    // The sidechannel RPC reports no exit status on failure (only its gRPC status), as for
    // gitlab-shell: the tunnel ends with 1.
    expect(exitStatusOf(body)).toBe(1);
  });

  it('framed mode ends a successful call with exit status 0 and no error', async () => {
    const t = await open(UPLOAD, { ...FRAMED, ...PROTOCOL_V2 });
    await t.waitFor((buf) => flushCount(payloadOf(buf, ResponseFrame.stdout)) === 1);
    t.write(lsRefs());
    await t.waitFor((buf) => flushCount(payloadOf(buf, ResponseFrame.stdout)) === 2);
    t.end();
    expect(await t.done).toBe(true);
    expect(errorOf(t.received())).toBeUndefined();
    expect(exitStatusOf(t.received())).toBe(0);
  });

  it('framed mode sends keepalives while git is silent', async () => {
    const t = await open(UPLOAD, { ...FRAMED, ...PROTOCOL_V2 });
    await t.waitFor((buf) => flushCount(payloadOf(buf, ResponseFrame.stdout)) === 1);
    const keepalivesAfterAdvert = (buf: Buffer) => {
      const types = frames(buf).map((f) => f.type);
      return types
        .slice(types.lastIndexOf(ResponseFrame.stdout) + 1)
        .filter((x) => x === ResponseFrame.keepalive).length;
    };
    // upload-pack waits for a command; nothing flows but keepalives, one per 150 ms period.
    await t.waitFor((buf) => keepalivesAfterAdvert(buf) >= 2, 2000);
    t.end();
    expect(await t.done).toBe(true);
    const types = frames(t.received()).map((f) => f.type);
    const afterAdvert = types.slice(types.lastIndexOf(ResponseFrame.stdout) + 1);
    expect(keepalivesAfterAdvert(t.received())).toBeGreaterThanOrEqual(2);
    expect(afterAdvert.at(-1)).toBe(ResponseFrame.exitStatus);
    expect(exitStatusOf(t.received())).toBe(0);
  });

  it('unwraps body framing v1 and drops keepalive frames: git gets exact bytes', async () => {
    const t = await open(UPLOAD, { ...BODY_FRAMED, ...PROTOCOL_V2 });
    await t.waitFor((buf) => flushCount(buf) === 1);
    // One ls-refs request with ~200 KB of prefixes, cut mid-pkt-line with a keepalive in between.
    const prefixes = Array.from({ length: 2000 }, (_, i) => `refs/heads/nothing-here-${'x'.repeat(60)}-${i}`);
    const request = lsRefs([...prefixes, 'refs/heads/main']);
    t.write(Buffer.concat([...encodeBodyData(request.subarray(0, 10)), encodeFrame(0x02)]));
    t.write(Buffer.concat(encodeBodyData(request.subarray(10))));
    const answer = await t.waitFor((buf) => flushCount(buf) === 2);
    expect(mainOid(answer)).toMatch(/^[0-9a-f]{40}$/);
    expect(answer.toString()).not.toContain('nothing-here');
    t.end(encodeFrame(0x02));
    expect(await t.done).toBe(true);
    expect(t.received().length).toBe(answer.length);
  });

  for (const framed of [false, true]) {
    it(`aborts on a malformed body frame (${framed ? 'framed' : 'compatible'} response) and stops git`, async () => {
      const id = `badframe-${protocol}-${framed}`;
      const t = await open(UPLOAD, {
        ...BODY_FRAMED,
        ...PROTOCOL_V2,
        ...(framed ? FRAMED : {}),
        'x-request-id': id,
      });
      const stdout = (buf: Buffer) => (framed ? payloadOf(buf, ResponseFrame.stdout) : buf);
      await t.waitFor((buf) => flushCount(stdout(buf)) === 1);
      t.write(Buffer.concat(encodeBodyData(lsRefs())));
      const answered = await t.waitFor((buf) => flushCount(stdout(buf)) === 2);
      expect(liveGit()).toBeGreaterThan(0);
      t.write(Buffer.from([0x07, 0, 0, 0, 1, 0x41]));
      expect(await t.done).toBe(true);
      if (framed) {
        expect(errorOf(t.received())).toMatchObject({ code: 'BRIDGE_BAD_FRAME' });
      } else {
        expect(t.received().toString('latin1')).toBe(`${answered.toString('latin1')}Internal Server Error\n`);
      }
      await gitGone();
      t.close();
      expect(await tunnelLog(id)).toMatchObject({ error_code: 'BRIDGE_BAD_FRAME' });
      await waitUntil(() => gitalyOutcome(id) !== undefined, 2000, 'mock Gitaly log');
      expect(gitalyOutcome(id)).toBe('cancelled');
    });
  }

  describe('client gone', () => {
    it('before pre-authorization answers: the Rails request is abandoned, no git ever starts', async () => {
      const id = `gone-preauth-${protocol}`;
      h.rails.setPolicy(`hang/${protocol}`, { kind: 'hang' });
      const t = await openFake(`/hang/${protocol}.git/ssh-upload-pack`, { 'x-request-id': id });
      await waitUntil(() => h.rails.preauths().some((r) => r.headers['x-request-id'] === id), 2000);
      t.abort();
      await waitUntil(
        () => h.rails.preauths().some((r) => r.headers['x-request-id'] === id && r.abandoned),
        2000,
        'pre-authorization request abandoned',
      );
      expect(await tunnelLog(id, f)).toMatchObject({ outcome: 'client-gone' });
      expect(h.gitaly.logs.correlated(id)).toEqual([]);
      await gitGone();
    });

    it('during negotiation: git is gone within 2 s', async () => {
      const id = `gone-negotiation-${protocol}`;
      const t = await open(UPLOAD, { 'x-request-id': id });
      await t.waitFor((buf) => flushCount(buf) === 1);
      expect(liveGit()).toBeGreaterThan(0);
      const started = performance.now();
      t.abort();
      await gitGone();
      expect(performance.now() - started).toBeLessThan(2000);
      expect(await tunnelLog(id)).toMatchObject({ outcome: 'client-gone' });
      await waitUntil(() => gitalyOutcome(id) !== undefined, 2000, 'mock Gitaly log');
      expect(gitalyOutcome(id)).toBe('cancelled');
    });

    it('mid-pack: git (and pack-objects) are gone within 2 s', async () => {
      const id = `gone-pack-${protocol}`;
      const t = await open(BIG_UPLOAD, { 'x-request-id': id }, USER.dave);
      const advert = await t.waitFor((buf) => flushCount(buf) === 1);
      t.write(wantDone(mainOid(advert) as string));
      await t.waitFor((buf) => (packAfterNak(buf)?.length ?? 0) > 256 * 1024, 10_000);
      t.pause();
      expect(liveGit()).toBeGreaterThan(0);
      t.abort();
      await gitGone();
      expect(await tunnelLog(id)).toMatchObject({ outcome: 'client-gone' });
    });
  });

  it('applies backpressure to the request body: a Gitaly that does not read stops the client', async () => {
    const id = `deaf-${protocol}`;
    h.rails.setPolicy(`deaf/${protocol}`, { kind: 'allow', gitalyAddress: endless.address });
    const t = await openFake(`/deaf/${protocol}.git/ssh-receive-pack`, { 'x-request-id': id });
    expect(await t.status).toBe(200);
    const chunk = Buffer.alloc(1024 * 1024, 'p');
    for (let i = 0; i < 48; i++) t.write(chunk);
    await new Promise((r) => setTimeout(r, 1000));
    const accepted = async () =>
      (await f.bridge.metrics.bytes.get()).values.find(
        (v) => v.labels.route === 'ssh_receive_pack' && v.labels.direction === 'in',
      )?.value ?? 0;
    const first = await accepted();
    await new Promise((r) => setTimeout(r, 300));
    expect(await accepted()).toBe(first);
    expect(first).toBeLessThan(24 * 1024 * 1024);
    expect(endless.call(id)?.rpc).toBe('SSHReceivePack');
    // Over HTTP/1.1 a client gone while its body is backpressured is only noticed when Gitaly moves
    // again (README): the double ends the call.
    t.close();
    endless.call(id)?.end();
    expect(await tunnelLog(id, f)).toMatchObject({ route: 'ssh_receive_pack' });
  });

  it('applies backpressure to the response: a client that stops reading stalls git, and the pack arrives intact', async () => {
    const id = `stall-${protocol}`;
    const t = await open(BIG_UPLOAD, { 'x-request-id': id }, USER.dave);
    const advert = await t.waitFor((buf) => flushCount(buf) === 1);
    t.write(wantDone(mainOid(advert) as string));
    t.end();
    await t.waitFor((buf) => (packAfterNak(buf)?.length ?? 0) > 1024 * 1024, 10_000);
    // Stop reading: the client's buffers fill, then the bridge's, then Gitaly's, then git blocks.
    t.pause();
    await new Promise((r) => setTimeout(r, 800));
    const out1 = await bytesOut();
    await new Promise((r) => setTimeout(r, 400));
    expect(await bytesOut()).toBe(out1);
    // git has not finished: the 32 MiB pack does not fit in what lies between git and the client.
    expect(liveGit()).toBeGreaterThan(0);
    t.resume();
    expect(await t.done).toBe(true);
    const pack = packAfterNak(t.received()) as Buffer;
    expect(pack.length).toBeGreaterThan(BIG_BLOB_BYTES);
    // Intact: `PACK`, version 2, 3 objects (commit, tree, blob), and the trailing SHA-1 of it all.
    expect(pack.subarray(0, 12)).toEqual(Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 3]));
    const sha1 = createHash('sha1').update(pack.subarray(0, -20)).digest();
    expect(pack.subarray(-20)).toEqual(sha1);
    expect(await tunnelLog(id)).toMatchObject({ outcome: 'ok' });
  });
});
