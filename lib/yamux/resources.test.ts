import { once } from 'node:events';
import type net from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { YamuxSession } from './session.js';
import { closed, nextStream, quiet, sessionPair, tcpPair } from './test-support.js';

const tcpHandles = () => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;

describe('resources', () => {
  it('clears every timer (keepalive, open, close, ping, shutdown grace) when the sessions end', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      const { client, server, sockets } = await sessionPair(
        'memory',
        { keepAliveIntervalMs: 1000 },
        { keepAliveIntervalMs: 1000 },
      );
      const a = quiet(client.open());
      a.end('x'); // waits for the peer's FIN: close timer
      await nextStream(server);
      const pending = client.ping(60_000).catch((err: unknown) => err);
      quiet(client.open()); // un-ACKed for a moment: open timer
      expect(vi.getTimerCount()).toBeGreaterThanOrEqual(4);
      client.close();
      expect(await pending).toMatchObject({ code: 'YAMUX_SESSION_CLOSED' });
      await Promise.all([closed(sockets.client), closed(sockets.server)]);
      expect(client.closed && server.closed).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves no TCP handles behind and turns Nagle off on the socket', async () => {
    const before = tcpHandles();
    const sockets = await tcpPair();
    const noDelay = vi.spyOn(sockets.client as net.Socket, 'setNoDelay');
    const client = new YamuxSession(sockets.client, { role: 'client' });
    const server = new YamuxSession(sockets.server, { role: 'server' });
    expect(noDelay).toHaveBeenCalledWith(true);
    expect(tcpHandles()).toBeGreaterThan(before);
    const s = quiet(client.open());
    s.resume();
    s.end('bye');
    const r = await nextStream(server);
    r.resume();
    await once(r, 'end');
    r.end();
    await closed(s);
    const ended = Promise.all([once(client, 'close'), once(server, 'close')]);
    client.close();
    await ended;
    await Promise.all([closed(sockets.client), closed(sockets.server)]);
    await sockets.close();
    // libuv releases closed handles on a later loop turn.
    await vi.waitFor(() => expect(tcpHandles()).toBe(before), { timeout: 2000, interval: 10 });
  });
});
