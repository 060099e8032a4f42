import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { gitalyAuthHeader } from '../lib/gitaly-auth.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { encodeStdin, SIDECHANNEL_OK, STDIN_FLUSH } from '../lib/sidechannel.js';
import { Flag, FrameType } from '../lib/yamux/index.js';
import { waitUntil } from '../test/helpers/poll.js';
import { UNKNOWN_UPLOAD_PACK } from './ssh-service.js';
import {
  type BackchannelClient,
  connectBackchannel,
  SidechannelCall,
} from './test-support/backchannel-client.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  git,
  gitChildren,
  onCleanup,
  RawCall,
  type StartedGitaly,
  startGitaly,
  stubHookProgram,
  tempDir,
  waitForNoGit,
} from './test-support/harness.js';
import { RawBackchannel, readPreamble } from './test-support/raw-backchannel.js';

/** The listener, the yamux session and the emulation switches, seen from real clients and raw bytes. */

const REPO = 'group/project.git';
const repository = { storage_name: 'default', relative_path: REPO };

let g: StartedGitaly;
let commit: string;

async function start(settings: Record<string, unknown> = {}, files?: Record<string, string | Buffer>) {
  g = await startGitaly(settings, { hookProgram: stubHookProgram() });
  commit = await createRepo(g.storage, REPO, files ?? { 'README.md': '# hello\n' });
}

function backchannel(address = `tcp://${g.address}`, opts: { ca?: Buffer } = {}): BackchannelClient {
  const bc = connectBackchannel(address, opts);
  onCleanup(() => bc.close());
  return bc;
}

async function raw(): Promise<RawBackchannel> {
  const r = await RawBackchannel.connect(Number(g.address.split(':')[1]));
  onCleanup(() => r.close());
  return r;
}

afterEach(cleanup);

/** A v0 fetch of `commit` without side-band: the answer is `NAK` and the raw pack. */
async function fetchPack(bc: BackchannelClient): Promise<Buffer> {
  const call = new SidechannelCall(bc, { repository }, authMetadata(g.token));
  await call.write(Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT, encodePkt('done\n')]));
  await call.closeWrite();
  const outcome = await call.done;
  expect(outcome.error).toBeNull();
  return outcome.stdout;
}

/** The advertisement ends with a flush; then the pack follows `0008NAK\n`. */
async function verifyPack(stdout: Buffer): Promise<void> {
  const nak = stdout.indexOf('0008NAK\n');
  expect(nak).toBeGreaterThanOrEqual(0);
  const pack = join(tempDir(), 'pack');
  writeFileSync(pack, stdout.subarray(nak + 8));
  const dir = join(tempDir(), 'verify.git');
  await git(['init', '--bare', dir]);
  await git(['index-pack', '--stdin'], { cwd: dir, input: stdout.subarray(nak + 8) });
}

describe('one listener for backchannel and plain gRPC', () => {
  it('serves plain gRPC and backchannel sessions on the same port; bidi RPCs work on both', async () => {
    await start();
    const bc = backchannel();
    for (const client of [g.client, bc.client]) {
      const call = new RawCall(client, 'SSHUploadArchive', authMetadata(g.token));
      call.send({ repository });
      call.send({ stdin: Buffer.concat([encodePkt('argument HEAD\n'), FLUSH_PKT]) });
      call.call.end();
      const done = await call.done;
      expect(done.status.code).toBe(grpc.status.OK);
      expect(done.stdout.toString('latin1')).toContain('README.md');
    }
    const push = new RawCall(bc.client, 'SSHReceivePack', authMetadata(g.token));
    push.send({ repository, gl_id: 'user-1' });
    await push.waitForStdout((out) => out.toString().endsWith('0000'));
    expect(push.stdout.toString()).toContain(`${commit} refs/heads/main`);
    push.send({ stdin: FLUSH_PKT });
    push.call.end();
    expect((await push.done).status.code).toBe(grpc.status.OK);
    expect(g.gitaly.backchannelSessions).toBe(1);
  });

  it('grants 16 MiB − 256 KiB at ACK, like a hashicorp Gitaly server, and resets a second client stream', async () => {
    await start();
    const r = await raw();
    r.http2();
    const second = r.session.open();
    second.on('error', () => {});
    await waitUntil(() => r.frames.some((f) => f.dir === 'in' && f.header.streamId === 3), 5000, 'stream 3');
    const ack = r.frames.find((f) => f.dir === 'in' && f.header.streamId === 1);
    expect(ack?.header).toMatchObject({ type: FrameType.WindowUpdate, flags: Flag.ACK, length: 0x00fc0000 });
    await waitUntil(() => second.destroyed, 5000, 'the second stream to be reset');
    const rst = r.frames.find((f) => f.dir === 'in' && f.header.streamId === 3 && f.header.flags & Flag.RST);
    expect(rst).toBeDefined();
  });

  it('SSHUploadPack is UNIMPLEMENTED with grpc-go’s text on both kinds of connection, token or not', async () => {
    await start();
    const bc = backchannel();
    for (const [client, md] of [
      [g.client, authMetadata(g.token)],
      [bc.client, new grpc.Metadata()],
    ] as const) {
      const call = new RawCall(client, 'SSHUploadPack', md);
      call.send({ repository });
      const { status } = await call.done;
      expect({ code: status.code, details: status.details }).toEqual({
        code: grpc.status.UNIMPLEMENTED,
        details: UNKNOWN_UPLOAD_PACK,
      });
    }
  });

  it('legacyUploadPack serves the bidi SSHUploadPack over the backchannel too', async () => {
    await start({ legacyUploadPack: true });
    const call = new RawCall(backchannel().client, 'SSHUploadPack', authMetadata(g.token));
    call.send({ repository, git_protocol: 'version=2' });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    call.send({ stdin: FLUSH_PKT });
    call.call.end();
    expect((await call.done).status.code).toBe(grpc.status.OK);
  });
});

describe('sessions and git', () => {
  it('a session killed mid-clone kills its git', async () => {
    await start({}, { 'big.bin': randomBytes(3 * 1024 * 1024) });
    const r = await raw();
    const md = { authorization: gitalyAuthHeader(g.token), 'gitaly-sidechannel-id': '1' };
    void r.unary('SSHUploadPackWithSidechannel', { repository }, md);
    const stream = await r.nextInbound(0);
    await readPreamble(stream);
    stream.write(SIDECHANNEL_OK);
    const want = Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT, encodePkt('done\n')]);
    stream.write(Buffer.concat([...encodeStdin(want), STDIN_FLUSH]));
    // Read a little of the pack, then stop reading: the window fills and git blocks.
    await new Promise((resolve) => {
      stream.once('data', resolve);
      stream.resume();
    });
    stream.pause();
    await waitUntil(() => g.gitaly.backchannelSessions === 1, 5000, 'the session');
    expect(gitChildren().length).toBeGreaterThan(0);
    r.socket.destroy();
    expect(await waitForNoGit(2000)).toEqual([]);
    await waitUntil(() => g.gitaly.backchannelSessions === 0, 2000, 'the session to end');
  });

  it('10 concurrent clones over one connection', async () => {
    await start({}, { 'big.bin': randomBytes(512 * 1024), 'README.md': 'hi\n' });
    const bc = backchannel();
    const packs = await Promise.all(Array.from({ length: 10 }, () => fetchPack(bc)));
    expect(g.gitaly.backchannelSessions).toBe(1);
    for (const stdout of packs) await verifyPack(stdout);
    expect(await waitForNoGit(2000)).toEqual([]);
  });

  it('stop lets a running sidechannel call finish when it does so within the grace period', async () => {
    await start();
    const bc = backchannel();
    const call = new SidechannelCall(bc, { repository }, authMetadata(g.token));
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    const stopped = g.gitaly.stop(10_000);
    await call.write(Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT, encodePkt('done\n')]));
    await call.closeWrite();
    const outcome = await call.done;
    expect(outcome.error).toBeNull();
    expect(outcome.stdout.toString('latin1')).toContain('PACK');
    const started = Date.now();
    await stopped;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(g.gitaly.backchannelSessions).toBe(0);
  });

  it('stop lets a running sidechannel call finish within the grace period, then kills git', async () => {
    await start();
    const bc = backchannel();
    const call = new SidechannelCall(bc, { repository, git_protocol: 'version=2' }, authMetadata(g.token));
    await call.waitForStdout((out) => out.toString().includes('version 2\n'));
    const started = Date.now();
    await g.gitaly.stop(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const outcome = await call.done;
    expect(outcome.error).not.toBeNull();
    expect(await waitForNoGit(2000)).toEqual([]);
  });
});
