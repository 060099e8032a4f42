import { afterEach, describe, expect, it, vi } from 'vitest';
import { YamuxSession } from './session.js';
import { memoryPair, nextStream, quiet, readAll, sessionPair, writeAll } from './test-support.js';

type Gc = (options: { type: 'minor' }) => void;
const g = globalThis as { gc?: Gc };
const realGc = g.gc;

afterEach(() => {
  g.gc = realGc;
  vi.resetModules();
});

/** young-gc.ts takes the runtime's `gc` on first use, so each test loads a fresh copy after setting it. */
async function freshPacer(spy: Gc) {
  g.gc = spy;
  vi.resetModules();
  return import('./young-gc.js');
}

describe('paceYoungGc', () => {
  it('runs one young-generation collection per `everyBytes` moved, across calls', async () => {
    const spy = vi.fn<Gc>();
    const { paceYoungGc } = await freshPacer(spy);
    paceYoungGc(600, 1000);
    expect(spy).not.toHaveBeenCalled();
    paceYoungGc(600, 1000);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy).toHaveBeenCalledWith({ type: 'minor' });
    for (let i = 0; i < 5; i++) paceYoungGc(999, 1000);
    expect(spy).toHaveBeenCalledTimes(3);
  });

  it('obtains V8’s gc without --expose-gc and survives calling it', async () => {
    g.gc = undefined;
    vi.resetModules();
    const { paceYoungGc } = await import('./young-gc.js');
    expect(() => paceYoungGc(2, 1)).not.toThrow();
  });
});

describe('youngGcEveryBytes', () => {
  it('is off by default and validated like the other options', () => {
    const sock = memoryPair().client;
    expect(() => new YamuxSession(sock, { role: 'client', youngGcEveryBytes: -1 })).toThrow(
      expect.objectContaining({ code: 'YAMUX_INVALID_OPTION' }),
    );
    sock.destroy();
  });

  it('a session with it moves data unchanged', async () => {
    const pair = await sessionPair('memory', { youngGcEveryBytes: 64 * 1024 }, { youngGcEveryBytes: 1 });
    const data = Buffer.alloc(512 * 1024, 7);
    const inbound = nextStream(pair.server);
    const stream = quiet(pair.client.open());
    const sent = writeAll(stream, data).then(() => stream.end());
    const received = await readAll(quiet(await inbound));
    await sent;
    expect(received.equals(data)).toBe(true);
    await pair.close();
  });
});
