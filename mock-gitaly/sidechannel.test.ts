import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIM_PKT, encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import {
  type BackchannelClient,
  connectBackchannel,
  SidechannelCall,
} from './test-support/backchannel-client.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  gitChildren,
  onCleanup,
  type StartedGitaly,
  startGitaly,
  stubHookProgram,
  waitForNoGit,
} from './test-support/harness.js';

/**
 * `SSHUploadPackWithSidechannel` against a real git, with Gitaly's own cases
 * (`internal/gitaly/service/ssh/upload_pack_test.go`): the client is the bridge's `lib/gitaly`
 * backchannel with a hand-driven sidechannel.
 */

const REPO = 'group/project.git';
const repository = { storage_name: 'default', relative_path: REPO };

let g: StartedGitaly;
let bc: BackchannelClient;
let commit: string;

async function start(settings: Record<string, unknown> = {}) {
  g = await startGitaly(settings, { hookProgram: stubHookProgram() });
  commit = await createRepo(g.storage, REPO, { 'README.md': '# hello\n' });
  bc = connectBackchannel(`tcp://${g.address}`);
  onCleanup(() => bc.close());
}

afterEach(cleanup);

function upload(request: Record<string, unknown> = { repository }, metadata = authMetadata(g.token)) {
  return new SidechannelCall(bc, request, metadata);
}

const v2 = { repository, git_protocol: 'version=2' };
const pkt = (s: string) => encodePkt(s);

function expectStats(outcome: Awaited<SidechannelCall['done']>, expected: Record<string, unknown>) {
  expect(outcome.error).toBeNull();
  const stats = outcome.response?.packfile_negotiation_statistics ?? {};
  const actual = {
    packets: Number(stats.packets ?? 0),
    caps: stats.caps ?? [],
    wants: Number(stats.wants ?? 0),
    haves: Number(stats.haves ?? 0),
    shallows: Number(stats.shallows ?? 0),
    deepen: stats.deepen ?? '',
    filter: stats.filter ?? '',
  };
  expect(actual).toEqual({
    packets: 0,
    caps: [],
    wants: 0,
    haves: 0,
    shallows: 0,
    deepen: '',
    filter: '',
    ...expected,
  });
}

function expectStatus(outcome: Awaited<SidechannelCall['done']>, code: grpc.status, details: string) {
  expect({ code: outcome.error?.code, details: outcome.error?.details }).toEqual({ code, details });
}

describe('SSHUploadPackWithSidechannel (Gitaly TestUploadPackWithSidechannel_client)', () => {
  it('successful clone: the pack on band 1, statistics as Gitaly counts them', async () => {
    await start();
    const call = upload();
    await call.write(pkt(`want ${commit} multi_ack\n`));
    await call.write(FLUSH_PKT);
    await call.write(pkt('done\n'));
    await call.closeWrite();
    const outcome = await call.done;
    expectStats(outcome, { packets: 2, caps: ['multi_ack'], wants: 1 });
    expect(Number(outcome.response?.packfile_negotiation_statistics?.payload_size)).toBeGreaterThan(0);
    expect(outcome.stdout.toString('latin1')).toContain('PACK');
  });

  it('successful clone with protocol v2', async () => {
    await start();
    const call = upload(v2);
    for (const line of ['command=fetch\n', 'agent=git/2.36.1\n', 'object-format=sha1\n'])
      await call.write(pkt(line));
    await call.write(DELIM_PKT);
    await call.write(pkt(`want ${commit}\n`));
    await call.write(pkt('done\n'));
    await call.write(FLUSH_PKT);
    await call.closeWrite();
    const outcome = await call.done;
    expectStats(outcome, { packets: 5, wants: 1 });
    expect(outcome.stdout.toString('latin1')).toContain('packfile\n');
  });

  it('client talks protocol v0 but v2 is requested', async () => {
    await start();
    const call = upload(v2);
    await call.write(pkt(`want ${commit} multi_ack\n`));
    await call.write(FLUSH_PKT);
    await call.write(pkt('done\n'));
    await call.closeWrite();
    const outcome = await call.done;
    expectStatus(
      outcome,
      grpc.status.INTERNAL,
      `running upload-pack: cmd wait: exit status 128, stderr: "fatal: unknown capability 'want ${commit} multi_ack'\\n"`,
    );
    expect(outcome.stderr).toBe(`fatal: unknown capability 'want ${commit} multi_ack'\n`);
  });

  it('client talks protocol v2 but v0 is requested', async () => {
    await start();
    const call = upload();
    for (const line of ['command=fetch\n', 'agent=git/2.36.1\n', 'object-format=sha1\n'])
      await call.write(pkt(line));
    await call.write(DELIM_PKT);
    await call.write(pkt(`want ${commit}\n`));
    await call.write(pkt('done\n'));
    await call.write(FLUSH_PKT);
    await call.closeWrite();
    expectStatus(
      await call.done,
      grpc.status.INTERNAL,
      `running upload-pack: cmd wait: exit status 128, stderr: "fatal: git upload-pack: protocol error, expected to get object ID, not 'command=fetch'\\n"`,
    );
  });

  it.each([
    ['request missing object', `want ${'1'.repeat(40)} multi_ack\n`, `not our ref ${'1'.repeat(40)}`],
    [
      'request invalidly formatted object',
      'want 1111 multi_ack\n',
      "protocol error, expected to get object ID, not 'want 1111 multi_ack'",
    ],
  ])('%s', async (_name, want, fatal) => {
    await start();
    const call = upload();
    await call.write(pkt(want));
    await call.write(FLUSH_PKT);
    await call.write(pkt('done\n'));
    await call.closeWrite();
    expectStatus(
      await call.done,
      grpc.status.INTERNAL,
      `running upload-pack: cmd wait: exit status 128, stderr: "fatal: git upload-pack: ${fatal}\\n"`,
    );
  });

  it('missing input: only the flush → OK, empty statistics', async () => {
    await start();
    const call = upload(v2);
    await call.closeWrite();
    const outcome = await call.done;
    expectStats(outcome, {});
    expect(Number(outcome.response?.packfile_negotiation_statistics?.payload_size ?? 0)).toBe(0);
    expect(outcome.stdout.toString()).toContain('version 2\n');
  });

  it('short write: a request cut short → CANCELLED user canceled the request', async () => {
    await start();
    const call = upload(v2);
    await call.write(pkt('command=fetch\n'));
    await call.write('0011agent');
    await call.closeWrite();
    expectStatus(await call.done, grpc.status.CANCELLED, 'running upload-pack: user canceled the request');
  });

  it('garbage', async () => {
    await start();
    const call = upload(v2);
    await call.write(pkt('foobar'));
    await call.closeWrite();
    expectStatus(
      await call.done,
      grpc.status.INTERNAL,
      `running upload-pack: cmd wait: exit status 128, stderr: "fatal: unknown capability 'foobar'\\n"`,
    );
  });

  it.each([
    ['close and cancellation', true, 'before'],
    ['cancellation and close', true, 'after'],
    ['cancellation without close', false, 'never'],
  ])('%s: git is killed, the client sees CANCELLED', async (_name, close, when) => {
    await start();
    const call = upload(v2);
    await call.write(pkt('command=fetch\n'));
    await call.write(pkt('agent=git/2.36.1\n'));
    await call.waitForStdout((out) => out.toString().includes('version 2\n'));
    expect(gitChildren().length).toBeGreaterThan(0);
    if (close && when === 'before') await call.closeWrite();
    call.call.cancel();
    if (close && when === 'after') await call.closeWrite().catch(() => {});
    const outcome = await call.done;
    expect(outcome.error?.code).toBe(grpc.status.CANCELLED);
    expect(await waitForNoGit(2000)).toEqual([]);
  });

  it('the client ending the stream without the flush ends git stdin; git decides (hung up → CANCELLED)', async () => {
    await start();
    const call = upload();
    await call.write(pkt(`want ${commit} multi_ack\n`));
    (await call.stream).end();
    expectStatus(await call.done, grpc.status.CANCELLED, 'running upload-pack: user canceled the request');
  });

  it('a bare 0001 on the sidechannel ends git stdin the same way', async () => {
    await start();
    const call = upload();
    await call.write(pkt(`want ${commit} multi_ack\n`));
    await call.writeRaw('0001');
    expectStatus(await call.done, grpc.status.CANCELLED, 'running upload-pack: user canceled the request');
  });

  it('bytes after the flush are ignored', async () => {
    await start();
    const call = upload();
    await call.write(Buffer.concat([pkt(`want ${commit}\n`), FLUSH_PKT, pkt('done\n')]));
    await call.writeRaw('0000trashtrash');
    const outcome = await call.done;
    expectStats(outcome, { packets: 2, wants: 1 });
    expect(outcome.stdout.toString('latin1')).toContain('PACK');
  });
});

describe('SSHUploadPackWithSidechannel deadlines and checks', () => {
  it('a silent client gets DEADLINE_EXCEEDED and its git is killed (Gitaly _timeout)', async () => {
    await start({ uploadPackNegotiationTimeoutMs: 500 });
    const call = upload();
    await call.stream;
    const started = Date.now();
    const outcome = await call.done;
    expect(Date.now() - started).toBeLessThan(5000);
    expectStatus(
      outcome,
      grpc.status.DEADLINE_EXCEEDED,
      'running upload-pack: waiting for negotiation: context canceled',
    );
    expect(await waitForNoGit(2000)).toEqual([]);
  });

  it.each([
    ['missing repository', {}, grpc.status.INVALID_ARGUMENT, 'repository not set'],
    [
      'missing relative path',
      { repository: { storage_name: 'default' } },
      grpc.status.INVALID_ARGUMENT,
      'GetRepoPath: relative path not set',
    ],
    [
      'unknown storage',
      { repository: { storage_name: 'nope', relative_path: REPO } },
      grpc.status.INVALID_ARGUMENT,
      'GetStorageByName: no such storage: "nope"',
    ],
    [
      'no repository there',
      { repository: { storage_name: 'default', relative_path: 'missing.git' } },
      grpc.status.NOT_FOUND,
      'GetRepoPath: not a git repository: "missing.git"',
    ],
  ])('%s: rejected before any sidechannel is opened (Gitaly _validation)', async (_n, req, code, details) => {
    await start();
    const outcome = await upload(req).done;
    expectStatus(outcome, code, details);
    expect(outcome.opened).toBe(false);
  });

  it('checks the token before anything else', async () => {
    await start();
    const outcome = await upload({ repository }, new grpc.Metadata()).done;
    expectStatus(outcome, grpc.status.UNAUTHENTICATED, 'authentication required');
    expect(outcome.opened).toBe(false);
  });

  it('a bad git_config_option fails after the sidechannel was opened, as in Gitaly', async () => {
    await start();
    const outcome = await upload({ repository, git_config_options: ['novalue'] }).done;
    expect(outcome.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(outcome.opened).toBe(true);
  });

  it('takes the last gitaly-sidechannel-id value', async () => {
    await start();
    const md = authMetadata(g.token);
    const waiter = bc.registry.register();
    md.add('gitaly-sidechannel-id', '999999');
    md.add('gitaly-sidechannel-id', `${waiter.id}`);
    const call = new SidechannelCall(bc, { repository, git_protocol: 'version=2' }, md);
    // The call's own waiter (registered by SidechannelCall) is not the last value: ours gets the stream.
    const stream = await waiter.stream;
    stream.write('0000');
    stream.resume();
    const outcome = await call.done;
    expect(outcome.error).toBeNull();
    expect(outcome.opened).toBe(false);
  });

  it('without gitaly-sidechannel-id: INTERNAL, as Gitaly', async () => {
    await start();
    const client = bc.client as unknown as Record<string, (...a: unknown[]) => void>;
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.SSHUploadPackWithSidechannel!.call(bc.client, { repository }, authMetadata(g.token), resolve),
    );
    expect({ code: err?.code, details: err?.details }).toEqual({
      code: grpc.status.INTERNAL,
      details: 'opennig sidechannel: sidechannel: sidechannel-id not found in incoming metadata',
    });
  });
});
