import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../test/helpers/poll.js';
import { collect, gitViaSsh, remoteUrl } from '../test-support/clients.js';
import { parsePrometheusCounters } from '../test-support/spawned-router.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * gitlab-sshd's operations surface with real git and OpenSSH: readiness `/start` and liveness
 * `/health`, its metric names and buckets, and a graceful shutdown that lets a long clone finish.
 */
let stack: TestStack | undefined;
let relay: Server | undefined;

afterEach(async () => {
  relay?.close();
  relay = undefined;
  await stack?.close();
  stack = undefined;
});

async function get(base: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, text: await res.text() };
}

function metricsBase(s: TestStack): string {
  const m = s.addresses.metrics;
  if (!m) throw new Error('no metrics listener');
  return `http://127.0.0.1:${m.port}`;
}

/** A TCP relay to `target` that hands the router's bytes to the client at `bytesPerSecond`. */
async function slowRelay(target: number, bytesPerSecond: number): Promise<number> {
  const server = createServer((client: Socket) => {
    const upstream = connect(target, '127.0.0.1');
    client.pipe(upstream);
    const queue: Buffer[] = [];
    const slice = Math.max(1, Math.floor(bytesPerSecond / 50));
    const timer = setInterval(() => {
      let budget = slice;
      while (budget > 0 && queue.length > 0) {
        const head = queue[0] as Buffer;
        const part = head.subarray(0, budget);
        client.write(part);
        budget -= part.length;
        if (part.length === head.length) queue.shift();
        else queue[0] = head.subarray(part.length);
      }
      if (queue.length < 4) upstream.resume();
    }, 20);
    upstream.on('data', (c: Buffer) => {
      queue.push(c);
      if (queue.length >= 4) upstream.pause();
    });
    const end = () => {
      clearInterval(timer);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', () => {
      const drain = setInterval(() => {
        if (queue.length === 0) {
          clearInterval(drain);
          end();
        }
      }, 20);
    });
    client.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  relay = server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

describe('probes and metrics', () => {
  it("answers /start, /health and gitlab-sshd's metrics", async () => {
    stack = await startTestStack({ metricsListen: '127.0.0.1:0' });
    const s = stack;
    await s.addProject('acme/app', 'cell_eu0');
    const base = metricsBase(s);
    expect((await get(base, '/start')).status).toBe(200);
    expect((await get(base, '/health')).status).toBe(200);

    const dest = join(mkdtempSync(join(s.dir, 'work-')), 'app');
    const clone = await collect(
      gitViaSsh(s.alice.privateKey, s.sshPort, ['clone', '-q', remoteUrl(s.sshPort, 'acme/app'), dest]),
    );
    expect(clone.code).toBe(0);
    // Protocol v2 clones in one session (ls-refs and fetch through one upload-pack).
    await waitUntil(
      async () =>
        parsePrometheusCounters((await get(base, '/metrics')).text)[
          'gitlab_sli:shell_sshd_connections:total'
        ] === 1,
      5000,
      'the connection SLI',
    );
    const metrics = parsePrometheusCounters((await get(base, '/metrics')).text);
    expect(metrics).toMatchObject({
      'gitlab_sli:shell_sshd_sessions:total': 1,
      'gitlab_sli:shell_sshd_sessions:errors_total': 0,
      'gitlab_sli:shell_sshd_connections:total': 1,
      'gitlab_sli:shell_sshd_connections:errors_total': 0,
      gitlab_shell_sshd_in_flight_connections: 0,
      gitlab_shell_sshd_concurrent_limited_sessions_total: 0,
      'gitlab_shell_sshd_session_duration_seconds_bucket{le="5"}': 1,
      'gitlab_shell_sshd_session_duration_seconds_bucket{le="30"}': 1,
      'gitlab_shell_sshd_session_duration_seconds_bucket{le="60"}': 1,
      gitlab_shell_sshd_session_duration_seconds_count: 1,
      'gitlab_shell_sshd_session_established_duration_seconds_bucket{le="0.5"}': 1,
      'gitlab_shell_sshd_session_established_duration_seconds_bucket{le="1"}': 1,
      'gitlab_shell_sshd_session_established_duration_seconds_bucket{le="5"}': 1,
    });
  });
});

const BLOB_BYTES = 18 << 20;

describe('graceful shutdown', () => {
  it('lets a long clone finish within the grace period; /start answers 503 meanwhile', async () => {
    stack = await startTestStack({ metricsListen: '127.0.0.1:0', shutdownGraceMs: 60_000 });
    const s = stack;
    // ~18 MB of pack (base64 of random bytes), read by the client at 6 MB/s: a clone of seconds,
    // more than every buffer on the way (HTTP/2 and SSH windows, sockets) holds, so git upload-pack
    // on the cell is still sending when shutdown begins.
    await s.addProject('acme/big', 'cell_eu0', { 'blob.txt': randomBytes(BLOB_BYTES).toString('base64') });
    const port = await slowRelay(s.sshPort, 6 << 20);
    const dest = join(mkdtempSync(join(s.dir, 'work-')), 'big');
    const clone = collect(
      gitViaSsh(s.alice.privateKey, port, ['clone', '-q', remoteUrl(port, 'acme/big'), dest]),
    );
    const packing = () =>
      s
        .cell('cell_eu0')
        .seen('/acme/big.git/ssh-upload-pack')
        .find((r) => r.bodyEnded);
    await waitUntil(() => packing() !== undefined, 30_000, 'the pack request');
    // git upload-pack is still sending the pack when the router is told to stop.
    expect(packing()?.exitCode).toBeUndefined();
    const started = Date.now();
    const closed = s.router.close();
    await waitUntil(async () => (await get(metricsBase(s), '/start')).status === 503, 5000, 'not ready');
    const result = await clone;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(readFileSync(join(dest, 'blob.txt')).length).toBe(Math.ceil(BLOB_BYTES / 3) * 4);
    await closed;
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(packing()?.exitCode).toBe(0);
  });
});
