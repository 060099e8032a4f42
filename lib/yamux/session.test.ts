import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { YamuxError } from './errors.js';
import { Flag, FrameType, GoAwayCode } from './frame.js';
import type { YamuxOptions } from './options.js';
import { YamuxSession } from './session.js';
import {
  memoryPair,
  nextStream,
  quiet,
  rawPeerSession,
  readAll,
  type SessionPair,
  sessionPair,
  closed as streamClosed,
} from './test-support.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function pair(...args: Parameters<typeof sessionPair>): Promise<SessionPair> {
  const p = await sessionPair(...args);
  cleanups.push(() => p.close());
  return p;
}

/** Our session on one end of an in-memory pair, a hand-driven peer on the other. */
function withRawPeer(role: 'client' | 'server', opts: Partial<YamuxOptions> = {}) {
  const p = rawPeerSession(role, opts);
  cleanups.push(p.close);
  return p;
}

const closeEvent = (s: YamuxSession) => once(s, 'close') as Promise<[Error | undefined]>;

describe('streams', () => {
  it.each(['memory', 'tcp'] as const)('half-closes with FIN in both directions (%s)', async (transport) => {
    const { client, server } = await pair(transport);
    const a = quiet(client.open());
    a.end('hello');
    const b = await nextStream(server);
    expect((await readAll(b)).toString()).toBe('hello');
    expect(b.writable).toBe(true);
    b.end('world');
    expect((await readAll(a)).toString()).toBe('world');
    await Promise.all([streamClosed(a), streamClosed(b)]);
    expect(client.streamCount).toBe(0);
    expect(server.streamCount).toBe(0);
    expect(client.stats).toMatchObject({ streamsOpened: 1, streamsAccepted: 0 });
    expect(server.stats).toMatchObject({ streamsOpened: 0, streamsAccepted: 1 });
  });

  it('propagates destroy() as RST: the peer stream errors with YAMUX_STREAM_RESET', async () => {
    const { client, server } = await pair('memory');
    const a = quiet(client.open());
    a.write('x');
    const b = await nextStream(server);
    const failed = once(b, 'error');
    a.destroy();
    const [err] = await failed;
    expect(err).toBeInstanceOf(YamuxError);
    expect((err as YamuxError).code).toBe('YAMUX_STREAM_RESET');
    await streamClosed(b);
    expect(server.streamCount).toBe(0);
    expect(client.streamCount).toBe(0);
  });

  it('delivers data that rides on the SYN and a FIN that rides on Data', async () => {
    const { session, raw } = withRawPeer('client');
    const got = nextStream(session);
    raw.send(FrameType.Data, Flag.SYN | Flag.FIN, 2, 5, Buffer.from('hello'));
    const stream = await got;
    expect((await readAll(stream)).toString()).toBe('hello');
    const ack = await raw.waitFor((f) => f.header.streamId === 2);
    expect(ack.header).toMatchObject({ type: FrameType.WindowUpdate, flags: Flag.ACK, length: 0 });
  });

  it('resets a stream whose peer never FINs after ours (streamCloseTimeoutMs)', async () => {
    const { session, raw } = withRawPeer('client', { streamCloseTimeoutMs: 30 });
    const s = quiet(session.open());
    raw.send(FrameType.WindowUpdate, Flag.ACK, 1, 0);
    s.end();
    s.resume();
    const [err] = await once(s, 'error');
    expect((err as YamuxError).code).toBe('YAMUX_CLOSE_TIMEOUT');
    await raw.waitFor((f) => (f.header.flags & Flag.RST) !== 0);
  });
});

describe('session', () => {
  it('answers pings and measures its own', async () => {
    const { client, server } = await pair('tcp');
    const rtt = await client.ping();
    expect(rtt).toBeGreaterThanOrEqual(0);
    expect(await server.ping(5_000)).toBeLessThan(5_000);
  });

  it('sends keepalive pings when asked to', async () => {
    const { raw } = withRawPeer('client', { keepAliveIntervalMs: 10 });
    const ping = await raw.waitFor((f) => f.header.type === FrameType.Ping);
    expect(ping.header.flags).toBe(Flag.SYN);
  });

  it('GoAway stops open() on the peer, lets existing streams finish, then ends both sessions', async () => {
    const { client, server } = await pair('memory');
    const a = quiet(client.open());
    a.write('before');
    const b = await nextStream(server);
    const goaway = once(client, 'goaway');
    server.goAway();
    expect(await goaway).toEqual([GoAwayCode.normal]);
    expect(() => client.open()).toThrow(expect.objectContaining({ code: 'YAMUX_GO_AWAY' }));
    const closed = [closeEvent(client), closeEvent(server)] as const;
    b.end('after');
    a.end();
    expect((await readAll(b)).toString()).toBe('before');
    expect((await readAll(a)).toString()).toBe('after');
    expect((await closed[1])[0]).toBeUndefined();
    await closed[0];
  });

  it('refuses inbound streams after our own GoAway with RST', async () => {
    const { session, raw } = withRawPeer('server');
    session.on('stream', (s) => quiet(s));
    raw.send(FrameType.WindowUpdate, Flag.SYN, 1, 0); // keeps the session alive after GoAway
    await raw.waitFor((f) => f.header.streamId === 1);
    session.goAway();
    await raw.waitFor((f) => f.header.type === FrameType.GoAway);
    raw.send(FrameType.WindowUpdate, Flag.SYN, 3, 0);
    const rst = await raw.waitFor((f) => f.header.streamId === 3);
    expect(rst.header.flags).toBe(Flag.RST);
    expect(session.streamCount).toBe(1);
  });

  it('holds inbound streams while nobody listens and RSTs beyond acceptBacklog (Gitaly: backlog 1)', async () => {
    const { client, server } = await pair('memory', {}, { acceptBacklog: 1 });
    const first = nextStream(server); // once(): one Accept() call, as Gitaly's server makes
    const s1 = quiet(client.open());
    const s3 = quiet(client.open());
    const s5 = quiet(client.open());
    for (const s of [s1, s3, s5]) s.write('x');
    const [err] = await once(s5, 'error');
    expect((err as YamuxError).code).toBe('YAMUX_STREAM_RESET');
    expect((await first).id).toBe(1);
    expect(server.streamCount).toBe(2);
    const held = await nextStream(server);
    expect(held.id).toBe(3);
    expect((await held.take(1).toArray())[0]?.toString()).toBe('x');
  });

  it('close() destroys every stream with YAMUX_SESSION_CLOSED, on both sides', async () => {
    const { client, server } = await pair('tcp');
    const a = quiet(client.open());
    a.write('x');
    const b = await nextStream(server);
    const errors = [once(a, 'error'), once(b, 'error')];
    const closed = [closeEvent(client), closeEvent(server)] as const;
    client.close();
    for (const e of await Promise.all(errors)) expect((e[0] as YamuxError).code).toBe('YAMUX_SESSION_CLOSED');
    const [[clientErr], [serverErr]] = await Promise.all(closed);
    expect(clientErr).toBeUndefined();
    expect((serverErr as YamuxError).code).toBe('YAMUX_SESSION_CLOSED');
    expect(client.closed && server.closed).toBe(true);
    expect(() => client.open()).toThrow(expect.objectContaining({ code: 'YAMUX_SESSION_CLOSED' }));
    await expect(client.ping()).rejects.toMatchObject({ code: 'YAMUX_SESSION_CLOSED' });
  });

  it('ends when the socket errors or closes', async () => {
    const { client, sockets } = await pair('tcp');
    const closed = closeEvent(client);
    sockets.server.destroy();
    const [err] = await closed;
    expect((err as YamuxError).code).toBe('YAMUX_SESSION_CLOSED');
  });

  it('destroys the session when a stream it opened is not ACKed in time', async () => {
    const { session } = withRawPeer('client', { streamOpenTimeoutMs: 20 });
    quiet(session.open());
    const [err] = await closeEvent(session);
    expect((err as YamuxError).code).toBe('YAMUX_OPEN_TIMEOUT');
  });

  it('validates options', () => {
    const sock = memoryPair().client;
    for (const bad of [{ maxStreamWindow: 1024 }, { maxFrameData: 0 }, { acceptBacklog: -1 }]) {
      expect(() => new YamuxSession(sock, { role: 'client', ...bad })).toThrow(
        expect.objectContaining({ code: 'YAMUX_INVALID_OPTION' }),
      );
    }
    expect(() => new YamuxSession(sock, { role: 'peer' as 'client' })).toThrow(YamuxError);
    sock.destroy();
  });
});
