import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { loadSshService } from '../lib/proto.js';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';
import { startWithWorldChannel, type WorldChild } from '../test/helpers/world-channel.js';
import { authMetadata, cleanup, createRepo, RawCall, tempDir, writeSecret } from './test-support/harness.js';
import { MAX_QUEUE_TIME_MESSAGE } from './world.js';

/** `mock-gitaly/main.ts` as its own process with a world channel, as the stack's supervisor runs it. */
const REPO = 'group/project.git';
const TOKEN = 'world-channel-token';
let programs: CompiledPrograms;
let gitaly: WorldChild;
let client: grpc.Client;

beforeAll(async () => {
  programs = await compilePrograms(['mock-gitaly/main.ts', 'mock-gitaly/hook-main.ts']);
  const dir = tempDir('gitaly-world-');
  const storage = join(dir, 'storage');
  mkdirSync(storage);
  await createRepo(storage, REPO, { 'README.md': '# world\n' });
  const file = join(dir, 'config.json');
  const config = {
    listen: '127.0.0.1:0',
    storages: { default: storage },
    tokenFile: writeSecret(dir, 'token', TOKEN),
    gitlabUrl: 'http://127.0.0.1:9',
    gitlabSecretFile: writeSecret(dir, 'shell-secret', 'shell'),
    cell: 'cell_w1',
  };
  writeFileSync(file, JSON.stringify(config));
  gitaly = startWithWorldChannel(programs.path('mock-gitaly/main.ts'), file);
  const listening = await gitaly.listening;
  const Client = loadSshService();
  client = new Client(String(listening.address), grpc.credentials.createInsecure());
}, 120_000);

afterAll(async () => {
  client?.close();
  await gitaly?.stop();
  programs?.cleanup();
  await cleanup();
});

function archive() {
  const call = new RawCall(client, 'SSHUploadArchive', authMetadata(TOKEN));
  call.send({ repository: { storage_name: 'default', relative_path: REPO } });
  call.send({ stdin: Buffer.concat([encodePkt('argument HEAD\n'), FLUSH_PKT]) });
  call.call.end();
  return call.done;
}

describe('mock Gitaly over a world channel', () => {
  it('fault → {id}; the faulted call and the next one are journaled with the cell', async () => {
    const added = await gitaly.ok('gitaly', 'fault', {
      kind: 'resource-exhausted',
      rpc: 'SSHUploadArchive',
      times: 1,
    });
    expect(added).toEqual({ id: expect.any(Number) });
    expect((await archive()).status).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: MAX_QUEUE_TIME_MESSAGE,
    });
    expect((await archive()).status.code).toBe(grpc.status.OK);
    const seen = await gitaly.entries((e) => e.endpoint === '/gitaly.SSHService/SSHUploadArchive', 2);
    expect(seen.map((e) => [e.cell, e.service, e.status, e.fault?.kind])).toEqual([
      ['cell_w1', 'gitaly', 'RESOURCE_EXHAUSTED', 'resource-exhausted'],
      ['cell_w1', 'gitaly', 'OK', undefined],
    ]);
  });

  it('clearFaults and reset answer; bad arguments and unknown ops are refused', async () => {
    await gitaly.ok('gitaly', 'fault', { kind: 'unavailable' });
    expect(await gitaly.ok('gitaly', 'clearFaults', {})).toEqual({ cleared: 1 });
    expect(await gitaly.ok('gitaly', 'reset', {})).toEqual({});
    expect((await archive()).status.code).toBe(grpc.status.OK);
    expect(await gitaly.control('gitaly', 'fault', { kind: 'slow' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('delayMs'),
    });
    expect(await gitaly.control('gitaly', 'melt', {})).toMatchObject({ ok: false });
    expect(await gitaly.control('gitaly', 'reset', {}, 'cell_other')).toMatchObject({
      ok: false,
      error: 'this mock Gitaly serves cell cell_w1, not cell_other',
    });
    expect(await gitaly.ok('gitaly', 'reset', {}, 'cell_w1')).toEqual({});
    expect(await gitaly.ok('world', 'clockSkew', { ms: 0 })).toEqual({ service: 'mock-gitaly', skewMs: 0 });
  });
});
