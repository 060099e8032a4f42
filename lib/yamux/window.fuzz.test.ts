import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Flag, FrameType, INITIAL_WINDOW } from './frame.js';
import { YamuxSession } from './session.js';
import type { YamuxStream } from './stream.js';
import {
  memoryPair,
  quiet,
  type RawFrame,
  RawPeer,
  readAll,
  sessionPair,
  sha256,
  writeAll,
} from './test-support.js';

/**
 * A hand-driven receiver grants window in random amounts at random moments; our sender must never put more
 * Data on the wire than it was granted, never exceed maxFrameData, and still deliver every byte.
 */
async function senderRespectsGrants(total: number, maxFrameData: number, ackDelta: number, deltas: number[]) {
  const sockets = memoryPair();
  const session = new YamuxSession(sockets.client, { role: 'client', maxFrameData });
  let credit = INITIAL_WINDOW + ackDelta;
  let received = 0;
  const problems: string[] = [];
  const payload: Buffer[] = [];
  const raw = new RawPeer(sockets.server, (f: RawFrame) => {
    if (f.header.type !== FrameType.Data || f.header.streamId !== 1) return;
    received += f.header.length;
    payload.push(f.payload);
    if (received > credit) problems.push(`sent ${received} with ${credit} granted`);
    if (f.header.length > maxFrameData) problems.push(`frame of ${f.header.length} > ${maxFrameData}`);
    let delta = deltas.shift() ?? Math.max(0, total - credit);
    // A receiver that leaves the window at 0 would stall the test, not the property.
    if (received === credit && received < total) delta = Math.max(delta, 1);
    if (delta > 0) {
      credit += delta;
      raw.send(FrameType.WindowUpdate, 0, 1, delta);
    }
  });
  try {
    const data = randomBytes(total);
    const stream = quiet(session.open());
    raw.send(FrameType.WindowUpdate, Flag.ACK, 1, ackDelta);
    stream.end(data);
    await raw.waitFor((f) => (f.header.flags & Flag.FIN) !== 0 && f.header.streamId === 1);
    expect(problems).toEqual([]);
    expect(received).toBe(total);
    expect(sha256(payload)).toBe(sha256(data));
  } finally {
    session.close();
    await sockets.close();
  }
}

/** A receiver that reads in random sizes with random pauses never buffers more than its window. */
async function receiverStaysInWindow(
  window: number,
  maxFrameData: number,
  total: number,
  reads: number[],
  flowing: boolean,
) {
  const { client, server, close } = await sessionPair(
    'memory',
    { maxFrameData },
    { maxStreamWindow: window },
  );
  try {
    const data = randomBytes(total);
    const writer = quiet(client.open());
    const sent = writeAll(writer, data);
    const reader = await new Promise<YamuxStream>((resolve) => server.once('stream', resolve));
    quiet(reader);
    const chunks: Buffer[] = [];
    let maxBuffered = 0;
    let i = 0;
    if (flowing) {
      maxBuffered = await consumeFlowing(reader, reads, chunks);
    }
    while (!reader.readableEnded) {
      maxBuffered = Math.max(maxBuffered, reader.readableLength);
      const want = reads[i++ % reads.length]!;
      const chunk = reader.read(Math.min(want, reader.readableLength)) as Buffer | null;
      if (chunk !== null) chunks.push(chunk);
      // Let frames arrive between reads; sometimes wait longer, as a slow consumer would (not every
      // time: with reads of 7 bytes a 1 ms wait per read made an 800 KB case run for minutes).
      const slow = want % 7 === 0 && i % 64 === 1;
      await new Promise((resolve) => (slow ? setTimeout(resolve, 1) : setImmediate(resolve)));
      if (reader.readableLength === 0 && reader.readableEnded === false && chunk === null) {
        await Promise.race([new Promise((resolve) => reader.once('readable', resolve)), sent]);
      }
    }
    await sent;
    expect(maxBuffered).toBeLessThanOrEqual(window);
    expect(sha256(chunks)).toBe(sha256(data));
    expect(client.closed || server.closed).toBe(false);
  } finally {
    await close();
  }
}

/** 'data' events, pausing for a random while after some chunks, as pipe() does under backpressure. */
async function consumeFlowing(reader: YamuxStream, pauses: number[], chunks: Buffer[]): Promise<number> {
  let maxBuffered = 0;
  let i = 0;
  reader.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    maxBuffered = Math.max(maxBuffered, reader.readableLength);
    const p = pauses[i++ % pauses.length]!;
    if (p % 4 !== 0) return;
    reader.pause();
    setTimeout(() => reader.resume(), p % 3);
  });
  await new Promise((resolve) => reader.once('end', resolve));
  return maxBuffered;
}

describe('flow control fuzz', () => {
  it('random window grants are never exceeded (200 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 400_000 }),
        fc.integer({ min: 512, max: 70_000 }),
        fc.integer({ min: 0, max: 300_000 }),
        fc.array(fc.integer({ min: 0, max: 150_000 }), { maxLength: 40 }),
        senderRespectsGrants,
      ),
      { numRuns: 200 },
    );
  });

  it('random reading patterns keep the receive buffer within the window (150 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: INITIAL_WINDOW, max: 2 * INITIAL_WINDOW + 12345 }),
        fc.integer({ min: 1_000, max: 100_000 }),
        fc.integer({ min: 1, max: 800_000 }),
        fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        receiverStaysInWindow,
      ),
      { numRuns: 150 },
    );
  });
});

it('drains a reader that pauses and resumes (readAll after a stall)', async () => {
  const { client, server, close } = await sessionPair('memory');
  const data = randomBytes(3 * INITIAL_WINDOW);
  quiet(client.open()).end(data);
  const reader = quiet(await new Promise<YamuxStream>((resolve) => server.once('stream', resolve)));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(reader.readableLength).toBe(INITIAL_WINDOW);
  expect(sha256(await readAll(reader))).toBe(sha256(data));
  await close();
});
