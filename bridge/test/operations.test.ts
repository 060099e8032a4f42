import { register } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushCount, lsRefs, PROTOCOL_V2 } from '../test-support/git-wire.js';
import { type Harness, PROJECT, type RunningBridge, startHarness } from '../test-support/harness.js';
import { openTunnel } from '../test-support/tunnel-client.js';
import { waitUntil } from '../test-support/waits.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.createRepo(PROJECT);
});
afterAll(async () => {
  await h?.close();
});

async function scrape(b: RunningBridge): Promise<string> {
  const res = await fetch(`${b.metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

/** The value of one sample, e.g. `bridge_tunnels_total{route="ssh_upload_pack",outcome="ok"}`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

describe('metrics listener', () => {
  it('counts tunnels by route and outcome, bytes, durations, pre-auth latency and Gitaly errors', async () => {
    const b = await h.startBridge();
    const token = await h.token();
    const ok = openTunnel('h2', b.url, `/${PROJECT}.git/ssh-upload-pack`, {
      'gitlab-shell-api-request': token,
      ...PROTOCOL_V2,
    });
    expect(await ok.status).toBe(200);
    await ok.waitFor((buf) => flushCount(buf) === 1);
    const request = lsRefs();
    ok.write(request);
    await ok.waitFor((buf) => flushCount(buf) === 2);
    expect(sample(await scrape(b), 'bridge_tunnels_in_flight', { route: 'ssh_upload_pack' })).toBe(1);
    ok.end();
    expect(await ok.done).toBe(true);

    const rejected = openTunnel('h1', b.url, `/${PROJECT}.git/ssh-receive-pack`, {});
    expect(await rejected.status).toBe(404);
    await rejected.done;
    // Protocol v0 upload-pack fed garbage: git exits 128, mock Gitaly ends the call with INTERNAL.
    const failed = openTunnel('h1', b.url, `/${PROJECT}.git/ssh-upload-pack`, {
      'gitlab-shell-api-request': token,
    });
    await failed.waitFor((buf) => flushCount(buf) === 1);
    failed.write('xxxx\n');
    await failed.done;
    expect(failed.received().toString()).toMatch(/Internal Server Error\n$/);

    const text = await scrape(b);
    expect(sample(text, 'bridge_tunnels_in_flight', { route: 'ssh_upload_pack' })).toBe(0);
    expect(sample(text, 'bridge_tunnels_total', { route: 'ssh_upload_pack', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'bridge_tunnels_total', { route: 'ssh_upload_pack', outcome: 'system' })).toBe(1);
    expect(sample(text, 'bridge_tunnels_total', { route: 'ssh_receive_pack', outcome: 'policy' })).toBe(1);
    expect(sample(text, 'bridge_tunnel_bytes_total', { route: 'ssh_upload_pack', direction: 'in' })).toBe(
      request.length + 'xxxx\n'.length,
    );
    expect(sample(text, 'bridge_tunnel_bytes_total', { route: 'ssh_upload_pack', direction: 'out' })).toBe(
      ok.received().length + failed.received().length,
    );
    expect(
      sample(text, 'bridge_tunnel_duration_seconds_count', { route: 'ssh_upload_pack', outcome: 'ok' }),
    ).toBe(1);
    expect(sample(text, 'bridge_preauth_duration_seconds_count', { status: '200' })).toBe(2);
    expect(sample(text, 'bridge_gitaly_errors_total', { route: 'ssh_upload_pack', code: 'INTERNAL' })).toBe(
      1,
    );
    // The internal API through the bridge to the mock cell.
    const proxied = await fetch(`${b.url}/api/v4/internal/check`, {
      headers: { 'gitlab-shell-api-request': token },
    });
    expect(proxied.status).toBe(200);
    expect(await proxied.json()).toMatchObject({ api_version: 'v4' });
    const unauthorized = await fetch(`${b.url}/api/v4/internal/check`);
    expect(unauthorized.status).toBe(401);
    await unauthorized.text();
    const after = await scrape(b);
    expect(sample(after, 'bridge_proxy_requests_total', { status: '2xx' })).toBe(1);
    expect(sample(after, 'bridge_proxy_requests_total', { status: '4xx' })).toBe(1);
    // Its own registry: nothing lands in prom-client's global one.
    expect(await register.metrics()).not.toContain('bridge_tunnels_total');
  });

  it('writes one access line and one bridge_requests_total increment per request of every route', async () => {
    const b = await h.startBridge();
    const tunnel = openTunnel('h2', b.url, `/${PROJECT}.git/ssh-upload-pack`, {
      'gitlab-shell-api-request': await h.token(),
      'x-request-id': 'access-tunnel',
      ...PROTOCOL_V2,
    });
    await tunnel.waitFor((buf) => flushCount(buf) === 1);
    tunnel.end();
    expect(await tunnel.done).toBe(true);
    const health = await fetch(`${b.url}/-/bridge/health`, { headers: { 'x-request-id': 'access-health' } });
    expect(await health.json()).toEqual({ status: 'ok' });
    const proxied = await fetch(`${b.url}/api/v4/internal/check`, {
      headers: { 'x-request-id': 'access-proxy' },
    });
    expect(proxied.status).toBe(401);
    await proxied.text();

    const expected = [
      ['access-tunnel', 'tunnel', 'ssh_upload_pack', 'gitaly', 'ok', 200],
      ['access-health', 'health', 'health', 'self', 'ok', 200],
      ['access-proxy', 'proxy', 'proxy', 'rails', 'policy', 401],
    ] as const;
    await waitUntil(
      () => expected.every(([id]) => b.logs.correlated(id).some((l) => 'outcome' in l)),
      2000,
      'access lines',
    );
    const text = await scrape(b);
    for (const [id, msg, route, backend, outcome, status] of expected) {
      const access = b.logs.correlated(id).filter((l) => 'outcome' in l);
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ msg, route, backend, outcome, status });
      expect(sample(text, 'bridge_requests_total', { route, backend, outcome })).toBe(1);
      expect(sample(text, 'bridge_request_duration_seconds_count', { route, backend, outcome })).toBe(1);
    }
    expect(sample(text, 'bridge_tunnels_total', { route: 'ssh_upload_pack', outcome: 'ok' })).toBe(1);
  });

  it('serves liveness and readiness', async () => {
    const b = await h.startBridge();
    expect((await fetch(`${b.metricsUrl}/liveness`)).status).toBe(200);
    const ready = await fetch(`${b.metricsUrl}/readiness`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
  });
});
