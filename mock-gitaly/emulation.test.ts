import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { gitalyAuthHeader } from '../lib/gitaly-auth.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { SIDECHANNEL_MAGIC } from '../lib/sidechannel.js';
import { DEFAULT_MAX_FRAME_DATA, Flag, FrameType, type YamuxStream } from '../lib/yamux/index.js';
import { waitUntil } from '../test/helpers/poll.js';
import { connectBackchannel, SidechannelCall } from './test-support/backchannel-client.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  gitChildren,
  onCleanup,
  type StartedGitaly,
  startGitaly,
  stubHookProgram,
} from './test-support/harness.js';
import {
  inboundDataFrames,
  RawBackchannel,
  rawSidechannelFetch,
  readPreamble,
} from './test-support/raw-backchannel.js';

/** The emulation switches, each seen from the client's side of the wire. */

const REPO = 'group/project.git';
const repository = { storage_name: 'default', relative_path: REPO };
const H2_PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

let g: StartedGitaly;
let commit: string;

async function start(settings: Record<string, unknown>, files?: Record<string, string | Buffer>) {
  g = await startGitaly(settings, { hookProgram: stubHookProgram() });
  commit = await createRepo(g.storage, REPO, files ?? { 'README.md': '# hello\n' });
}

async function raw(): Promise<RawBackchannel> {
  const r = await RawBackchannel.connect(Number(g.address.split(':')[1]));
  onCleanup(() => r.close());
  return r;
}

afterEach(cleanup);

const want = () => Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT, encodePkt('done\n')]);
const fetch = (r: RawBackchannel) =>
  rawSidechannelFetch(r, { token: g.token, request: { repository }, stdin: want() });
const md = (id = '1') => ({ authorization: gitalyAuthHeader(g.token), 'gitaly-sidechannel-id': id });

function readBytes(stream: YamuxStream, n: number): Promise<Buffer> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length < n) return;
      stream.off('data', onData);
      resolve(got);
    };
    stream.on('data', onData);
  });
}

describe('eagerBackchannel (Gitaly < 17.11)', () => {
  it('opens stream 2 with an HTTP/2 preface; a client that resets it keeps a working session', async () => {
    await start({ eagerBackchannel: true });
    const r = await raw();
    r.http2();
    const eager = await r.nextInbound(0);
    expect(eager.id).toBe(2);
    expect((await readBytes(eager, H2_PREFACE.length)).toString('latin1').startsWith(H2_PREFACE)).toBe(true);
    eager.destroy();
    await r.session.ping();
    const unimplemented = await r.unary('SSHUploadPack', { repository }, md());
    expect(unimplemented.code).toBe(grpc.status.UNIMPLEMENTED);
    const result = await fetch(r);
    expect(result.code).toBe(grpc.status.OK);
    expect(result.preamble.magic).toBe('sidechannel');
    expect(r.session.closed).toBe(false);
  });

  it('a client that serves it (lib/gitaly, as Go clients do) clones as usual', async () => {
    await start({ eagerBackchannel: true });
    const bc = connectBackchannel(`tcp://${g.address}`);
    onCleanup(() => bc.close());
    const call = new SidechannelCall(bc, { repository }, authMetadata(g.token));
    await call.write(want());
    await call.closeWrite();
    const outcome = await call.done;
    expect(outcome.error).toBeNull();
    expect(outcome.stdout.toString('latin1')).toContain('PACK');
    expect(bc.refused).toEqual([]);
  });
});

describe('yamuxFlavour', () => {
  it('libp2p: a ping first, no window grant at ACK, Data frames of at most 64 KiB − 12', async () => {
    await start({ yamuxFlavour: 'libp2p' }, { 'big.bin': randomBytes(3 * 1024 * 1024) });
    const r = await raw();
    await waitUntil(() => r.frames.some((f) => f.dir === 'in'), 5000, 'a frame from the server');
    expect(r.frames.find((f) => f.dir === 'in')?.header).toMatchObject({
      type: FrameType.Ping,
      flags: Flag.SYN,
    });
    const result = await fetch(r);
    expect(result.code).toBe(grpc.status.OK);
    expect(result.bytes).toBeGreaterThan(3 * 1024 * 1024);
    const ack = r.frames.find((f) => f.dir === 'in' && f.header.streamId === 1 && f.header.flags & Flag.ACK);
    expect(ack?.header.length).toBe(0);
    const syn = r.frames.find((f) => f.dir === 'in' && f.header.streamId === 2 && f.header.flags & Flag.SYN);
    expect(syn?.header.length).toBe(0);
    expect(Math.max(...inboundDataFrames(r))).toBeLessThanOrEqual(DEFAULT_MAX_FRAME_DATA);
  });

  it('hashicorp (default): no ping of its own, 16 MiB − 256 KiB granted at SYN, frames within the window', async () => {
    await start({}, { 'big.bin': randomBytes(3 * 1024 * 1024) });
    const r = await raw();
    const result = await fetch(r);
    expect(result.code).toBe(grpc.status.OK);
    expect(r.frames.some((f) => f.dir === 'in' && f.header.type === FrameType.Ping)).toBe(false);
    // The golden trace of the doc (§ design, "Golden traces"): WU SYN Δ 16 MiB − 256 KiB, then the
    // magic and the id as two Data frames.
    const opening = r.frames.filter((f) => f.dir === 'in' && f.header.streamId === 2).slice(0, 3);
    expect(opening.map((f) => [f.header.type, f.header.flags, f.header.length])).toEqual([
      [FrameType.WindowUpdate, Flag.SYN, 0x00fc0000],
      [FrameType.Data, 0, 11],
      [FrameType.Data, 0, 8],
    ]);
    const sizes = inboundDataFrames(r);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(256 * 1024);
    // A sideband header travels with its data: the sidechannel has no 5-byte frames.
    const sidechannel = r.frames.filter((f) => f.dir === 'in' && f.header.streamId === 2);
    expect(sidechannel.filter((f) => f.header.type === FrameType.Data && f.header.length === 5)).toEqual([]);
  });
});

describe('the sidechannel handshake', () => {
  it('a missing ok fails the call after sidechannelHandshakeTimeoutMs, with Gitaly’s text', async () => {
    await start({ sidechannelHandshakeTimeoutMs: 300 });
    const r = await raw();
    const result = r.unary('SSHUploadPackWithSidechannel', { repository }, md());
    const stream = await r.nextInbound(0);
    const preamble = await readPreamble(stream);
    expect(preamble).toEqual({ magic: SIDECHANNEL_MAGIC.toString(), id: 1n });
    const ended = new Promise((resolve) => stream.once('end', resolve));
    stream.resume();
    expect(await result).toMatchObject({
      code: grpc.status.INTERNAL,
      details: 'opennig sidechannel: sidechannel: receive confirmation: i/o deadline reached',
    });
    await ended;
    expect(gitChildren()).toEqual([]);
  });

  it('a slow ok within the time is fine', async () => {
    await start({ sidechannelHandshakeTimeoutMs: 1000 });
    const r = await raw();
    const result = r.unary('SSHUploadPackWithSidechannel', { repository, git_protocol: 'version=2' }, md());
    const stream = await r.nextInbound(0);
    await readPreamble(stream);
    await new Promise((resolve) => setTimeout(resolve, 300));
    stream.write('ok0000');
    stream.resume();
    expect((await result).code).toBe(grpc.status.OK);
  });

  it('anything but ok fails the call', async () => {
    await start({});
    const r = await raw();
    const result = r.unary('SSHUploadPackWithSidechannel', { repository }, md());
    const stream = await r.nextInbound(0);
    await readPreamble(stream);
    stream.write('no');
    expect(await result).toMatchObject({
      code: grpc.status.INTERNAL,
      details: 'opennig sidechannel: sidechannel: expected ok, got "no"',
    });
  });

  it('sidechannelWrongId: the server announces another id; lib/gitaly refuses it and the call fails', async () => {
    await start({ sidechannelWrongId: true });
    const r = await raw();
    const result = r.unary('SSHUploadPackWithSidechannel', { repository }, md('5'));
    const preamble = await readPreamble(await r.nextInbound(0));
    expect(preamble.id).not.toBe(5n);
    const bc = connectBackchannel(`tcp://${g.address}`);
    onCleanup(() => bc.close());
    const outcome = await new SidechannelCall(bc, { repository }, authMetadata(g.token)).done;
    expect(outcome.opened).toBe(false);
    expect(bc.refused.join('\n')).toMatch(/not registered/);
    expect({ code: outcome.error?.code, details: outcome.error?.details }).toEqual({
      code: grpc.status.INTERNAL,
      details: 'opennig sidechannel: sidechannel: receive confirmation: connection reset',
    });
    r.close();
    await result;
  });
});
