import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FrameHeader, FrameType, INITIAL_WINDOW } from './frame.js';
import type { YamuxStream } from './stream.js';
import {
  closed,
  nextStream,
  quiet,
  readAll,
  type SessionPair,
  sessionPair,
  sha256,
  writeAll,
} from './test-support.js';

const MiB = 1024 * 1024;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function pair(...args: Parameters<typeof sessionPair>): Promise<SessionPair> {
  const p = await sessionPair(...args);
  cleanups.push(() => p.close());
  return p;
}

async function exchange(client: YamuxStream, server: YamuxStream, up: Buffer, down: Buffer) {
  const [atServer, atClient] = await Promise.all([
    readAll(server),
    readAll(client),
    writeAll(client, up),
    writeAll(server, down),
  ]);
  expect(sha256(atServer)).toBe(sha256(up));
  expect(sha256(atClient)).toBe(sha256(down));
  await Promise.all([closed(client), closed(server)]);
}

describe('bulk transfer', () => {
  it.each([
    ['tcp', {}],
    ['memory', {}],
    ['tcp', { maxStreamWindow: 16 * MiB }], // Gitaly's server window
  ] as const)('moves 10 MiB each way on 4 concurrent streams (%s %o)', async (transport, serverOpts) => {
    const { client, server } = await pair(transport, {}, { ...serverOpts, acceptBacklog: 8 });
    const accepted: YamuxStream[] = [];
    server.on('stream', (s) => accepted.push(quiet(s)));
    const opened = [0, 1, 2, 3].map(() => quiet(client.open()));
    for (const s of opened) s.write(Buffer.alloc(0));
    await vi.waitFor(() => expect(accepted).toHaveLength(4));
    await Promise.all(
      opened.map((s, i) =>
        exchange(s, accepted.find((a) => a.id === s.id)!, randomBytes(10 * MiB), randomBytes(10 * MiB + i)),
      ),
    );
    expect(client.streamCount + server.streamCount).toBe(0);
    expect(client.closed || server.closed).toBe(false);
  });

  it.each([INITIAL_WINDOW, 16 * MiB])(
    'measures one-stream throughput over loopback TCP (window %d)',
    async (window) => {
      const { client, server } = await pair('tcp', {}, { maxStreamWindow: window });
      const size = 256 * MiB;
      const chunk = randomBytes(MiB);
      const s = quiet(client.open());
      const started = performance.now();
      const got = nextStream(server).then(async (r) => {
        let n = 0;
        r.on('data', (c: Buffer) => {
          n += c.length;
        });
        await once(r, 'end');
        return n;
      });
      for (let sent = 0; sent < size; sent += chunk.length) {
        if (!s.write(chunk)) await once(s, 'drain');
      }
      s.end();
      expect(await got).toBe(size);
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `yamux one stream, loopback TCP, window ${window}: ${(size / MiB / seconds).toFixed(0)} MiB/s`,
      );
    },
  );
});

describe('flow control', () => {
  it('a reader that stops reading stalls the writer; buffered bytes stay within the window', async () => {
    const receiverWindow = 1 * MiB;
    const sent: FrameHeader[] = [];
    const { client, server } = await pair(
      'tcp',
      { onFrame: (d, h) => d === 'out' && h.type === FrameType.Data && sent.push(h) },
      { maxStreamWindow: receiverWindow },
    );
    const data = randomBytes(8 * MiB);
    const s = quiet(client.open());
    let acknowledged = 0;
    let sawFalse = false;
    for (let i = 0; i < data.length; i += 64 * 1024) {
      const piece = data.subarray(i, i + 64 * 1024);
      if (!s.write(piece, () => (acknowledged += piece.length))) sawFalse = true;
    }
    s.end();
    const r = await nextStream(server);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const dataSent = sent.reduce((n, h) => n + h.length, 0);
    expect(sawFalse).toBe(true);
    expect(dataSent).toBeLessThanOrEqual(receiverWindow);
    expect(dataSent).toBeGreaterThanOrEqual(INITIAL_WINDOW);
    expect(acknowledged).toBeLessThanOrEqual(dataSent);
    expect(r.readableLength).toBeLessThanOrEqual(receiverWindow);
    expect(r.readableLength).toBe(dataSent);
    let maxBuffered = 0;
    r.on('data', () => (maxBuffered = Math.max(maxBuffered, r.readableLength)));
    const got = await readAll(r);
    expect(sha256(got)).toBe(sha256(data));
    expect(maxBuffered).toBeLessThanOrEqual(receiverWindow);
    expect(acknowledged).toBe(data.length);
  });

  it('a slow reader on one stream does not stop another stream', async () => {
    const { client, server } = await pair('memory', {}, { acceptBacklog: 8 });
    const accepted: YamuxStream[] = [];
    server.on('stream', (s) => accepted.push(quiet(s)));
    const stuck = quiet(client.open());
    stuck.write(randomBytes(2 * MiB));
    const moving = quiet(client.open());
    const data = randomBytes(4 * MiB);
    moving.end(data);
    await vi.waitFor(() => expect(accepted).toHaveLength(2));
    const got = await readAll(accepted.find((a) => a.id === moving.id)!);
    expect(sha256(got)).toBe(sha256(data));
    expect(accepted.find((a) => a.id === stuck.id)!.readableLength).toBe(INITIAL_WINDOW);
  });
});
