import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponseFrame, FrameReader, ResponseFrame } from '../../lib/framing.js';
import { type Harness, startHarness } from '../test-support/harness.js';
import { openTunnel, type Protocol, type TunnelClient } from '../test-support/tunnel-client.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.gitaly.setBehaviour('echo/cat.git', { argv: ['cat'] });
});
afterAll(async () => {
  await h?.close();
});

const CAT = '/echo/cat.git/ssh-upload-pack';

async function tunnel(protocol: Protocol, url: string, path: string, glId = 'user-2', headers = {}) {
  return openTunnel(protocol, url, path, { 'gitlab-shell-api-request': await h.token(glId), ...headers });
}

function errorFrame(t: TunnelClient): { code: string; message: string } | undefined {
  const f = new FrameReader(checkResponseFrame)
    .push(t.received())
    .find((x) => x.type === ResponseFrame.error);
  return f && (JSON.parse(f.payload.toString()) as { code: string; message: string });
}

describe.each(['h1', 'h2'] as const)('concurrency limits over %s', (protocol) => {
  it('answers 429 to a user over the per-user limit, without touching others', async () => {
    const b = await h.startBridge({ maxTunnelsPerUser: 1 });
    const first = await tunnel(protocol, b.url, CAT);
    expect(await first.status).toBe(200);
    const started = performance.now();
    const second = await tunnel(protocol, b.url, CAT);
    expect(await second.status).toBe(429);
    await second.done;
    expect(performance.now() - started).toBeLessThan(1000);
    expect(second.received().toString()).toMatch(/Too many concurrent git operations for this user/);
    const other = await tunnel(protocol, b.url, CAT, 'user-3');
    expect(await other.status).toBe(200);
    other.end();
    first.end();
    await Promise.all([first.done, other.done]);
    const again = await tunnel(protocol, b.url, CAT);
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
    const first = await tunnel(protocol, b.url, CAT);
    expect(await first.status).toBe(200);
    const second = await tunnel(protocol, b.url, CAT, 'user-3');
    expect(await second.status).toBe(503);
    await second.done;
    expect(second.received().toString()).toMatch(/busy/);
    first.end();
    await first.done;
  });
});

describe('time limits', () => {
  it('ends an idle tunnel in-band (compatible text) and stops git', async () => {
    const b = await h.startBridge({ tunnelIdleTimeoutMs: 300 });
    const t = await tunnel('h1', b.url, CAT, 'user-2', { 'x-request-id': 'idle-compat' });
    t.write('a');
    await t.waitFor((buf) => buf.toString() === 'a');
    const started = performance.now();
    expect(await t.done).toBe(true);
    expect(performance.now() - started).toBeGreaterThan(250);
    expect(t.received().toString()).toBe('aInternal Server Error: no data in either direction for 300 ms\n');
    const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === 'idle-compat');
    await call?.exited;
    expect(call?.cancelled).toBe(true);
    expect(b.logs.tunnels().at(-1)).toMatchObject({ outcome: 'policy', error_code: 'BRIDGE_IDLE_TIMEOUT' });
  });

  it('keeps a tunnel with traffic alive past the idle timeout, and reports idleness framed', async () => {
    const b = await h.startBridge({ tunnelIdleTimeoutMs: 300 });
    const t = await tunnel('h2', b.url, CAT, 'user-2', { 'gitlab-cells-response-framing': 'v1' });
    for (let i = 0; i < 6; i++) {
      t.write('x');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(errorFrame(t)).toBeUndefined();
    expect(await t.done).toBe(true);
    expect(errorFrame(t)?.code).toBe('BRIDGE_IDLE_TIMEOUT');
  });

  it('ends a tunnel that exceeds the maximum duration even while busy', async () => {
    const b = await h.startBridge({ tunnelMaxDurationMs: 500 });
    const t = await tunnel('h2', b.url, CAT, 'user-2', { 'gitlab-cells-response-framing': 'v1' });
    const started = performance.now();
    const timer = setInterval(() => t.write('y'), 50);
    try {
      expect(await t.done).toBe(true);
    } finally {
      clearInterval(timer);
    }
    expect(performance.now() - started).toBeGreaterThan(450);
    expect(errorFrame(t)?.code).toBe('BRIDGE_TUNNEL_TIMEOUT');
  });
});

describe('receive-pack body limit', () => {
  it('ends a push larger than maxReceivePackBytes, and leaves upload-pack alone', async () => {
    h.gitaly.setBehaviour('echo/push.git', { argv: ['cat'] });
    const b = await h.startBridge({ maxReceivePackBytes: 1000 });
    const fetch = await tunnel('h1', b.url, CAT);
    fetch.write(Buffer.alloc(3000, 'f'));
    await fetch.waitFor((buf) => buf.length === 3000);
    fetch.end();
    expect(await fetch.done).toBe(true);

    const push = await tunnel('h1', b.url, '/echo/push.git/ssh-receive-pack', 'user-2', {
      'gitlab-cells-response-framing': 'v1',
    });
    push.write(Buffer.alloc(600, 'p'));
    await push.waitFor((buf) => buf.length >= 600);
    push.write(Buffer.alloc(600, 'p'));
    expect(await push.done).toBe(true);
    expect(errorFrame(push)).toMatchObject({ code: 'BRIDGE_BODY_TOO_LARGE' });
    push.close();
  });
});
