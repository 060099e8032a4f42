import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SidechannelRegistry } from './registry.js';

describe('SidechannelRegistry', () => {
  it('gives each call its own id and hands the stream to the waiter with that id', async () => {
    const registry = new SidechannelRegistry();
    const a = registry.register();
    const b = registry.register();
    expect(a.id).not.toBe(b.id);
    const stream = new PassThrough();
    expect(registry.deliver(b.id, stream)).toBe(true);
    expect(await b.stream).toBe(stream);
    expect(b.arrived).toBe(true);
    expect(a.arrived).toBe(false);
  });

  it('removes a waiter once its stream arrived: a second stream with that id is refused', () => {
    const registry = new SidechannelRegistry();
    const w = registry.register();
    expect(registry.deliver(w.id, new PassThrough())).toBe(true);
    expect(registry.deliver(w.id, new PassThrough())).toBe(false);
    expect(registry.size).toBe(0);
  });

  it('refuses unknown ids and ids whose waiter was closed', () => {
    const registry = new SidechannelRegistry();
    expect(registry.deliver(42n, new PassThrough())).toBe(false);
    const w = registry.register();
    w.close();
    expect(registry.has(w.id)).toBe(false);
    expect(registry.deliver(w.id, new PassThrough())).toBe(false);
    expect(w.arrived).toBe(false);
  });
});
