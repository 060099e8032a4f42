import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponseFrame, FrameReader, ResponseFrame } from '../../lib/framing.js';
import { type Harness, startHarness } from '../test-support/harness.js';
import { openTunnel } from '../test-support/tunnel-client.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.gitaly.setBehaviour('echo/cat.git', { argv: ['cat'] });
});
afterAll(async () => {
  await h?.close();
});

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
  it('stops accepting, fails readiness, and lets an in-flight tunnel finish', async () => {
    const b = await h.startBridge({ shutdownGraceMs: 5000 });
    const t = openTunnel(protocol, b.url, '/echo/cat.git/ssh-upload-pack', {
      'gitlab-shell-api-request': await h.token(),
      'gitlab-cells-response-framing': 'v1',
    });
    expect(await t.status).toBe(200);
    t.write('before ');
    await t.waitFor((buf) => buf.includes('before '));

    const closing = b.bridge.close();
    let closed = false;
    void closing.then(() => {
      closed = true;
    });
    expect((await fetch(`${b.metricsUrl}/readiness`)).status).toBe(503);
    expect(await connects(b.port)).toBe(false);

    t.write('after');
    await t.waitFor((buf) => buf.includes('after'));
    expect(closed).toBe(false);
    const ended = performance.now();
    t.end();
    expect(await t.done).toBe(true);
    await closing;
    expect(performance.now() - ended).toBeLessThan(2000);
    const frames = new FrameReader(checkResponseFrame).push(t.received());
    expect(frames.some((f) => f.type === ResponseFrame.error)).toBe(false);
    expect(frames.at(-1)?.payload.readInt32BE(0)).toBe(0);
  });
});

describe('graceful shutdown past the grace period', () => {
  it('cancels tunnels still running and says so in-band', async () => {
    const b = await h.startBridge({ shutdownGraceMs: 300 });
    const t = openTunnel('h2', b.url, '/echo/cat.git/ssh-upload-pack', {
      'gitlab-shell-api-request': await h.token(),
      'gitlab-cells-response-framing': 'v1',
      'x-request-id': 'shutdown-late',
    });
    expect(await t.status).toBe(200);
    t.write('x');
    await t.waitFor((buf) => buf.length > 0);
    const started = performance.now();
    await b.bridge.close();
    expect(performance.now() - started).toBeGreaterThan(250);
    expect(await t.done).toBe(true);
    const error = new FrameReader(checkResponseFrame)
      .push(t.received())
      .find((f) => f.type === ResponseFrame.error);
    expect(JSON.parse(error?.payload.toString() ?? '{}')).toMatchObject({ code: 'BRIDGE_SHUTTING_DOWN' });
    const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === 'shutdown-late');
    await call?.exited;
    expect(call?.cancelled).toBe(true);
  });
});
