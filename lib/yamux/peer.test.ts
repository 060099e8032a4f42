import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Flag, type FrameHeader, FrameType, GoAwayCode, INITIAL_WINDOW } from './frame.js';
import type { YamuxOptions } from './options.js';
import type { YamuxSession } from './session.js';
import {
  hex,
  nextStream,
  quiet,
  rawPeerSession,
  readAll,
  type SessionPair,
  sessionPair,
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
const outHex = (frames: FrameHeader[]) => frames.map((h) => hex(h));

describe('golden traces (hashicorp yamux configured like Gitaly)', () => {
  it('a default client opening stream 1 writes WindowUpdate SYN with delta 0', async () => {
    const { session, raw } = withRawPeer('client');
    quiet(session.open());
    await raw.waitFor(() => true);
    expect(Buffer.concat(raw.bytes).toString('hex')).toBe('000100010000000100000000');
  });

  it('a 16 MiB server ACKs with 0x00fc0000, opens with SYN 0x00fc0000, and the client ACKs with 0', async () => {
    const clientOut: FrameHeader[] = [];
    const serverOut: FrameHeader[] = [];
    const { client, server } = await pair(
      'memory',
      { onFrame: (d, h) => d === 'out' && clientOut.push(h) },
      {
        maxStreamWindow: 16 * 1024 * 1024,
        acceptBacklog: 1,
        onFrame: (d, h) => d === 'out' && serverOut.push(h),
      },
    );
    quiet(client.open());
    await nextStream(server);
    expect(outHex(serverOut)).toEqual(['000100020000000100fc0000']);
    const back = quiet(server.open());
    back.write('sidechannel');
    const accepted = await nextStream(client);
    expect(outHex(serverOut.slice(1, 2))).toEqual(['000100010000000200fc0000']);
    expect(serverOut[2]).toMatchObject({ type: FrameType.Data, flags: 0, streamId: 2, length: 11 });
    expect(outHex(clientOut)).toEqual(['000100010000000100000000', '000100020000000200000000']);
    expect((await accepted.take(1).toArray())[0]?.toString()).toBe('sidechannel');
  });
});

describe('peer behaviour (libp2p go-yamux and misbehaving peers, frames crafted by hand)', () => {
  it('copes with a ping at start, a zero-delta ACK and 64 KiB frames', async () => {
    const { session, raw } = withRawPeer('client');
    raw.send(FrameType.Ping, Flag.SYN, 0, 0x1234abcd);
    const pong = await raw.waitFor((f) => f.header.type === FrameType.Ping);
    expect(pong.header).toMatchObject({ flags: Flag.ACK, streamId: 0, length: 0x1234abcd });
    const s = quiet(session.open());
    raw.send(FrameType.WindowUpdate, Flag.ACK, 1, 0);
    const frame = Buffer.alloc(65536 - 12, 7);
    for (let i = 0; i < 4; i += 1) raw.send(FrameType.Data, 0, 1, frame.length, frame);
    raw.send(FrameType.WindowUpdate, Flag.FIN, 1, 0);
    const body = await readAll(s);
    expect(body.length).toBe(4 * frame.length);
    const update = await raw.waitFor((f) => f.header.type === FrameType.WindowUpdate && f.header.flags === 0);
    expect(update.header).toMatchObject({ streamId: 1 });
    expect(update.header.length).toBeGreaterThanOrEqual(INITIAL_WINDOW / 2);
  });

  it('accepts a frame as large as the window it granted (hashicorp senders are not capped at 64 KiB)', async () => {
    const { session, raw } = withRawPeer('server', { maxStreamWindow: 1024 * 1024 });
    const got = nextStream(session);
    raw.send(FrameType.WindowUpdate, Flag.SYN, 1, 0);
    await raw.waitFor((f) => f.header.flags === Flag.ACK);
    const big = Buffer.alloc(1024 * 1024, 1);
    raw.send(FrameType.Data, Flag.FIN, 1, big.length, big);
    expect((await readAll(await got)).length).toBe(big.length);
  });

  it('ignores WindowUpdate and discards Data for unknown streams', async () => {
    const { session, raw } = withRawPeer('client');
    raw.send(FrameType.WindowUpdate, 0, 99, 1000);
    raw.send(FrameType.Data, 0, 98, 3, Buffer.from('abc'));
    raw.send(FrameType.WindowUpdate, Flag.FIN, 97, 0);
    raw.send(FrameType.Ping, Flag.SYN, 0, 1);
    await raw.waitFor((f) => f.header.type === FrameType.Ping);
    expect(session.closed).toBe(false);
    expect(raw.frames.filter((f) => f.header.type !== FrameType.Ping)).toEqual([]);
  });

  it('a Data frame beyond the window gets GoAway(protocol error) and ends the session', async () => {
    const { session, raw } = withRawPeer('client');
    const s = quiet(session.open());
    const closed = closeEvent(session);
    raw.send(FrameType.WindowUpdate, Flag.ACK, 1, 0);
    const tooBig = Buffer.alloc(INITIAL_WINDOW + 1);
    raw.send(FrameType.Data, 0, 1, tooBig.length, tooBig);
    const goAway = await raw.waitFor((f) => f.header.type === FrameType.GoAway);
    expect(goAway.header.length).toBe(GoAwayCode.protocolError);
    expect((await closed)[0]).toMatchObject({ code: 'YAMUX_WINDOW_EXCEEDED' });
    expect(s.destroyed).toBe(true);
  });

  it.each([
    ['wrong parity', [3]],
    ['duplicate id', [2, 2]],
    ['stream id 0', [0]],
  ])('a SYN with %s is a protocol error', async (_name, ids) => {
    const { session, raw } = withRawPeer('client');
    session.on('stream', (s) => quiet(s));
    const closed = closeEvent(session);
    for (const id of ids) raw.send(FrameType.WindowUpdate, Flag.SYN, id, 0);
    const goAway = await raw.waitFor((f) => f.header.type === FrameType.GoAway);
    expect(goAway.header.length).toBe(GoAwayCode.protocolError);
    expect((await closed)[0]).toMatchObject({ code: 'YAMUX_PROTOCOL' });
  });

  it('a GoAway with an error code ends the session', async () => {
    const { session, raw } = withRawPeer('client');
    const closed = closeEvent(session);
    raw.send(FrameType.GoAway, 0, 0, GoAwayCode.internalError);
    expect((await closed)[0]).toMatchObject({ code: 'YAMUX_GO_AWAY' });
  });

  it('garbage on the wire gets GoAway(protocol error)', async () => {
    const { session, raw } = withRawPeer('server');
    const closed = closeEvent(session);
    raw.socket.write(Buffer.from('PRI * HTTP/2.0\r\n'));
    const goAway = await raw.waitFor((f) => f.header.type === FrameType.GoAway);
    expect(goAway.header.length).toBe(GoAwayCode.protocolError);
    expect((await closed)[0]).toMatchObject({ code: 'YAMUX_BAD_VERSION' });
  });
});
