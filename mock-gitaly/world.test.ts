import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalDraft } from '../lib/contracts/world.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { ControlArgumentError } from '../lib/world-channel.js';
import { waitUntil } from '../test/helpers/poll.js';
import {
  type BackchannelClient,
  connectBackchannel,
  SidechannelCall,
} from './test-support/backchannel-client.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  onCleanup,
  RawCall,
  type StartedGitaly,
  startGitaly,
  stubHookProgram,
} from './test-support/harness.js';
import { GitalyFaults, MAX_QUEUE_SIZE_MESSAGE, MAX_QUEUE_TIME_MESSAGE } from './world.js';

/** mock Gitaly's journal (`rpc-journal.ts`) and faults (`world.ts`), in process, over real gRPC and git. */
const REPO = 'group/project.git';
const repository = {
  storage_name: 'default',
  relative_path: REPO,
  gl_repository: 'project-7',
  gl_project_path: 'group/project',
};

let g: StartedGitaly;
let bc: BackchannelClient;
let commit: string;
let journal: JournalDraft[];

async function start() {
  journal = [];
  g = await startGitaly(
    { cell: 'cell_x' },
    { hookProgram: stubHookProgram(), journal: (e) => journal.push(e) },
  );
  commit = await createRepo(g.storage, REPO, { 'README.md': '# hello\n' });
  bc = connectBackchannel(`tcp://${g.address}`);
  onCleanup(() => bc.close());
}

afterEach(cleanup);

function archive() {
  const md = authMetadata(g.token);
  md.set('x-gitlab-correlation-id', 'corr-9');
  const call = new RawCall(g.client, 'SSHUploadArchive', md);
  call.send({ repository });
  call.send({
    stdin: Buffer.concat([encodePkt('argument --format=tar\n'), encodePkt('argument HEAD\n'), FLUSH_PKT]),
  });
  call.call.end();
  return call.done;
}

/** A clone over a sidechannel; `refused`: the call is expected to fail before any sidechannel opens. */
async function clone(refused = false) {
  const md = authMetadata(g.token);
  md.set('gitaly-feature-foo-bar', 'true');
  const call = new SidechannelCall(bc, { repository, git_protocol: 'version=0' }, md);
  if (refused) return call.done;
  await call.write(encodePkt(`want ${commit} multi_ack\n`));
  await call.write(FLUSH_PKT);
  await call.write(encodePkt('done\n'));
  await call.closeWrite();
  return call.done;
}

const entries = (rpc: string, n = 1) =>
  waitUntil(
    () => {
      const found = journal.filter((e) => e.endpoint === `/gitaly.SSHService/${rpc}`);
      return found.length >= n ? found : undefined;
    },
    5000,
    `${n} ${rpc} entries`,
  );

describe('mock Gitaly journal', () => {
  it('journals a sidechannel clone: cell, repository, metadata (token redacted), OK, sidechannel bytes', async () => {
    await start();
    expect((await clone()).error).toBeNull();
    const [e] = await entries('SSHUploadPackWithSidechannel');
    expect(e).toMatchObject({
      cell: 'cell_x',
      service: 'gitaly',
      status: 'OK',
      fields: {
        rpc: 'SSHUploadPackWithSidechannel',
        transport: 'backchannel',
        sidechannel: true,
        repository: {
          storage_name: 'default',
          relative_path: REPO,
          gl_repository: 'project-7',
          gl_project_path: 'group/project',
        },
        git_protocol: 'version=0',
      },
      headers: {
        authorization: '[redacted]',
        'gitaly-feature-foo-bar': 'true',
        'gitaly-sidechannel-id': expect.any(String),
      },
    });
    expect(e?.bytesIn).toBeGreaterThan(0);
    expect(e?.bytesOut).toBeGreaterThan(100);
  });

  it('journals a bidi RPC on a plain connection with stdin and stdout bytes', async () => {
    await start();
    const done = await archive();
    expect(done.status.code).toBe(grpc.status.OK);
    const [e] = await entries('SSHUploadArchive');
    expect(e).toMatchObject({
      status: 'OK',
      headers: { 'x-gitlab-correlation-id': 'corr-9' },
      fields: { transport: 'plain', sidechannel: false },
    });
    expect(e?.bytesOut).toBe(done.stdout.length + Buffer.byteLength(done.stderr));
    expect(e?.bytesIn).toBeGreaterThan(0);
  });

  it('journals a refused call with its code', async () => {
    await start();
    const call = new RawCall(g.client, 'SSHUploadPack', authMetadata(g.token));
    call.send({ repository });
    expect((await call.done).status.code).toBe(grpc.status.UNIMPLEMENTED);
    expect((await entries('SSHUploadPack'))[0]?.status).toBe('UNIMPLEMENTED');
  });
});

describe('mock Gitaly faults', () => {
  it('unavailable for one RPC, the given number of times, journaled with the fault', async () => {
    await start();
    g.gitaly.world.faults.add({ rpc: 'SSHUploadArchive', kind: 'unavailable', times: 1 });
    expect((await clone()).error).toBeNull();
    const failed = await archive();
    expect(failed.status.code).toBe(grpc.status.UNAVAILABLE);
    expect((await archive()).status.code).toBe(grpc.status.OK);
    const seen = await entries('SSHUploadArchive', 2);
    expect(seen.map((e) => [e.status, e.fault?.kind])).toEqual([
      ['UNAVAILABLE', 'unavailable'],
      ['OK', undefined],
    ]);
  });

  it("resource-exhausted answers Gitaly's limiter texts", async () => {
    await start();
    g.gitaly.world.faults.add({ kind: 'resource-exhausted', limit: 'queue-size', times: 1 });
    const out = await clone(true);
    expect({ code: out.error?.code, details: out.error?.details }).toEqual({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: MAX_QUEUE_SIZE_MESSAGE,
    });
    g.gitaly.world.faults.add({ kind: 'resource-exhausted', rpc: 'SSHUploadArchive' });
    expect((await archive()).status).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: MAX_QUEUE_TIME_MESSAGE,
    });
    expect((await entries('SSHUploadPackWithSidechannel'))[0]).toMatchObject({
      status: 'RESOURCE_EXHAUSTED',
      fault: { kind: 'resource-exhausted', limit: 'queue-size' },
    });
  });

  it('slow delays the start of the call, which then succeeds; clear removes every fault', async () => {
    await start();
    g.gitaly.world.faults.add({ kind: 'slow', delayMs: 400 });
    const t0 = performance.now();
    expect((await archive()).status.code).toBe(grpc.status.OK);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(350);
    expect((await clone()).error).toBeNull();
    expect((await entries('SSHUploadPackWithSidechannel'))[0]?.fault).toMatchObject({
      kind: 'slow',
      delayMs: 400,
    });
    expect(g.gitaly.world.faults.clear()).toEqual({ cleared: 1 });
  });

  it('validates its arguments', () => {
    const f = new GitalyFaults();
    for (const args of [
      {},
      { kind: 'down' },
      { kind: 'slow' },
      { kind: 'slow', delayMs: 0 },
      { kind: 'unavailable', delayMs: 5 },
      { kind: 'unavailable', times: 0 },
      { kind: 'unavailable', rpc: '/gitaly.SSHService/SSHReceivePack' },
      { kind: 'resource-exhausted', limit: 'cpu' },
      { kind: 'unavailable', typo: 1 },
    ])
      expect(() => f.add(args), JSON.stringify(args)).toThrow(ControlArgumentError);
    expect(f.add({ kind: 'unavailable' })).toEqual({ id: 1 });
    expect(f.take('SSHReceivePack')).toMatchObject({ kind: 'fail', code: grpc.status.UNAVAILABLE });
    expect(f.size).toBe(1);
  });
});
