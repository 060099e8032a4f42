import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseFrame } from '../../lib/framing.js';
import { flushCount, lsRefs, mainOid, PROTOCOL_V2, pushCommands } from '../test-support/git-wire.js';
import { type Harness, PROJECT, startHarness, USER } from '../test-support/harness.js';
import { errorOf, FRAMED, payloadOf } from '../test-support/response-frames.js';
import { openTunnel, type Protocol, type TunnelClient } from '../test-support/tunnel-client.js';
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
const RECEIVE = `/${PROJECT}.git/ssh-receive-pack`;

/** A protocol v2 upload-pack tunnel: git answers with its capabilities, then waits for commands. */
async function tunnel(
  protocol: Protocol,
  url: string,
  path = UPLOAD,
  glId: string = USER.alice,
  headers: Record<string, string> = {},
): Promise<TunnelClient> {
  return openTunnel(protocol, url, path, {
    'gitlab-shell-api-request': await h.token(glId),
    ...PROTOCOL_V2,
    ...headers,
  });
}

const framedStdout = (buf: Buffer) => payloadOf(buf, ResponseFrame.stdout);

describe.each(['h1', 'h2'] as const)('concurrency limits over %s', (protocol) => {
  it('answers 429 to a user over the per-user limit, without touching others', async () => {
    const b = await h.startBridge({ maxTunnelsPerUser: 1 });
    const first = await tunnel(protocol, b.url);
    expect(await first.status).toBe(200);
    const started = performance.now();
    const second = await tunnel(protocol, b.url);
    expect(await second.status).toBe(429);
    await second.done;
    expect(performance.now() - started).toBeLessThan(1000);
    expect(second.received().toString()).toMatch(/Too many concurrent git operations for this user/);
    const other = await tunnel(protocol, b.url, UPLOAD, USER.dave);
    expect(await other.status).toBe(200);
    other.end();
    first.end();
    await Promise.all([first.done, other.done]);
    const again = await tunnel(protocol, b.url);
    expect(await again.status).toBe(200);
    again.end();
    await again.done;
    expect(b.logs.tunnels().find((l) => l.status === 429)).toMatchObject({
      outcome: 'policy',
      error_code: 'BRIDGE_TOO_MANY_USER_TUNNELS',
    });
  });

  it('answers 503 over the per-bridge limit', async () => {
    const b = await h.startBridge({ maxTunnels: 1 });
    const first = await tunnel(protocol, b.url);
    expect(await first.status).toBe(200);
    const started = performance.now();
    const second = await tunnel(protocol, b.url, UPLOAD, USER.dave);
    expect(await second.status).toBe(503);
    await second.done;
    expect(performance.now() - started).toBeLessThan(1000);
    expect(second.received().toString()).toMatch(/busy/);
    first.end();
    await first.done;
  });
});

describe('time limits', () => {
  it('ends an idle tunnel in-band (compatible text) and stops git', async () => {
    const b = await h.startBridge({ tunnelIdleTimeoutMs: 300 });
    // Timed from before the request: the advertisement may reach this client well after the bridge
    // sent it (a loaded CI machine: 228 ms after it arrived here), but never before the tunnel began.
    const started = performance.now();
    const t = await tunnel('h1', b.url);
    const advert = await t.waitFor((buf) => flushCount(buf) === 1);
    expect(liveGit()).toBeGreaterThan(0);
    expect(await t.done).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(299);
    expect(t.received().toString()).toBe(
      `${advert.toString()}Internal Server Error: no data in either direction for 300 ms\n`,
    );
    await gitGone();
    expect(b.logs.tunnels().at(-1)).toMatchObject({ outcome: 'policy', error_code: 'BRIDGE_IDLE_TIMEOUT' });
  });

  it('keeps a tunnel with traffic alive past the idle timeout, and reports idleness framed', async () => {
    const b = await h.startBridge({ tunnelIdleTimeoutMs: 300 });
    const t = await tunnel('h2', b.url, UPLOAD, USER.alice, FRAMED);
    await t.waitFor((buf) => flushCount(framedStdout(buf)) === 1);
    for (let i = 1; i <= 6; i++) {
      t.write(lsRefs());
      await t.waitFor((buf) => flushCount(framedStdout(buf)) === 1 + i);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(errorOf(t.received())).toBeUndefined();
    expect(await t.done).toBe(true);
    expect(errorOf(t.received())?.code).toBe('BRIDGE_IDLE_TIMEOUT');
    await gitGone();
  });

  it('ends a tunnel that exceeds the maximum duration even while busy', async () => {
    const b = await h.startBridge({ tunnelMaxDurationMs: 500 });
    const t = await tunnel('h2', b.url, UPLOAD, USER.alice, FRAMED);
    const started = performance.now();
    const timer = setInterval(() => t.write(lsRefs()), 50);
    try {
      expect(await t.done).toBe(true);
    } finally {
      clearInterval(timer);
    }
    expect(performance.now() - started).toBeGreaterThan(450);
    // git answered all along: the tunnel was busy, not idle.
    expect(flushCount(framedStdout(t.received()))).toBeGreaterThan(3);
    expect(errorOf(t.received())?.code).toBe('BRIDGE_TUNNEL_TIMEOUT');
    await gitGone();
  });
});

describe('receive-pack body limit', () => {
  it('ends a push larger than maxReceivePackBytes, and leaves upload-pack alone', async () => {
    const b = await h.startBridge({ maxReceivePackBytes: 1000 });
    const fetch = await tunnel('h1', b.url);
    await fetch.waitFor((buf) => flushCount(buf) === 1);
    // ~3 KB of ls-refs: over the receive-pack limit, fine for upload-pack.
    const big = lsRefs(Array.from({ length: 40 }, (_, i) => `refs/heads/${'n'.repeat(60)}-${i}`));
    expect(big.length).toBeGreaterThan(3000);
    fetch.write(big);
    await fetch.waitFor((buf) => flushCount(buf) === 2);
    fetch.end();
    expect(await fetch.done).toBe(true);

    const push = await tunnel('h1', b.url, RECEIVE, USER.alice, FRAMED);
    const advert = await push.waitFor((buf) => flushCount(framedStdout(buf)) === 1);
    const oid = mainOid(framedStdout(advert)) as string;
    // Ref update commands without the closing flush: git keeps reading, the bridge counts.
    push.write(pushCommands(6, oid));
    await new Promise((r) => setTimeout(r, 100));
    expect(errorOf(push.received())).toBeUndefined();
    push.write(pushCommands(6, oid));
    expect(await push.done).toBe(true);
    expect(errorOf(push.received())).toMatchObject({ code: 'BRIDGE_BODY_TOO_LARGE' });
    push.close();
    await gitGone();
  });
});
