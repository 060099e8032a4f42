import { createHash } from 'node:crypto';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseFrame } from '../../lib/framing.js';
import { flushCount, mainOid, PROTOCOL_V2, packAfterNak, wantDone } from '../test-support/git-wire.js';
import { type Harness, PROJECT, startHarness } from '../test-support/harness.js';
import { errorOf, exitStatusOf, FRAMED, payloadOf } from '../test-support/response-frames.js';
import { openTunnel } from '../test-support/tunnel-client.js';
import { gitGone, liveGit } from '../test-support/waits.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.createRepo(PROJECT);
});
afterAll(async () => {
  await h?.close();
});

const UPLOAD = `/${PROJECT}.git/ssh-upload-pack`;
const stdout = (buf: Buffer) => payloadOf(buf, ResponseFrame.stdout);

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

describe.each(['h1', 'h2'] as const)('graceful shutdown over %s', (protocol) => {
  it('stops accepting, fails readiness, and lets an in-flight clone finish', async () => {
    const b = await h.startBridge({ shutdownGraceMs: 5000 });
    const t = openTunnel(protocol, b.url, UPLOAD, {
      'gitlab-shell-api-request': await h.token(),
      ...FRAMED,
    });
    expect(await t.status).toBe(200);
    // The clone is under way: git has advertised its refs and waits for the client's wants.
    const advert = await t.waitFor((buf) => flushCount(stdout(buf)) === 1);

    const closing = b.bridge.close();
    let closed = false;
    void closing.then(() => {
      closed = true;
    });
    expect((await fetch(`${b.metricsUrl}/readiness`)).status).toBe(503);
    expect(await connects(b.port)).toBe(false);

    t.write(wantDone(mainOid(stdout(advert)) as string));
    await t.waitFor((buf) => (packAfterNak(stdout(buf))?.length ?? 0) > 0);
    expect(closed).toBe(false);
    const ended = performance.now();
    t.end();
    expect(await t.done).toBe(true);
    await closing;
    expect(performance.now() - ended).toBeLessThan(2000);
    const body = t.received();
    expect(errorOf(body)).toBeUndefined();
    expect(exitStatusOf(body)).toBe(0);
    // The whole pack: commit, tree and README, with its trailing SHA-1.
    const pack = packAfterNak(stdout(body)) as Buffer;
    expect(pack.subarray(0, 12)).toEqual(Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 3]));
    expect(pack.subarray(-20)).toEqual(createHash('sha1').update(pack.subarray(0, -20)).digest());
  });
});

describe('graceful shutdown past the grace period', () => {
  it('cancels tunnels still running, says so in-band, and git is gone', async () => {
    const b = await h.startBridge({ shutdownGraceMs: 300 });
    const t = openTunnel('h2', b.url, UPLOAD, {
      'gitlab-shell-api-request': await h.token(),
      ...FRAMED,
      ...PROTOCOL_V2,
      'x-request-id': 'shutdown-late',
    });
    expect(await t.status).toBe(200);
    await t.waitFor((buf) => flushCount(stdout(buf)) === 1);
    expect(liveGit()).toBeGreaterThan(0);
    const started = performance.now();
    await b.bridge.close();
    expect(performance.now() - started).toBeGreaterThan(250);
    expect(await t.done).toBe(true);
    expect(errorOf(t.received())).toMatchObject({ code: 'BRIDGE_SHUTTING_DOWN' });
    await gitGone();
  });
});
