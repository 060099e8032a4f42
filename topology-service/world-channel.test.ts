import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClassifyResponse__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';
import { startWithWorldChannel, type WorldChild } from '../test/helpers/world-channel.js';
import { callUnary, claimOf, type TopologyClients, topologyClients, updateClaims } from './client.js';
import { TOPOLOGY_METHODS } from './protos.js';
import { cleanup, TEST_CELLS, tempDir } from './test-support/harness.js';

/** `topology-service/main.ts` as its own process with a world channel, as the stack's supervisor runs it. */
let programs: CompiledPrograms;
let service: WorldChild;
let clients: TopologyClients;

beforeAll(async () => {
  programs = await compilePrograms(['topology-service/main.ts']);
  const file = join(tempDir('topology-world-'), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({ grpcListen: '127.0.0.1:0', httpListen: '127.0.0.1:0', cells: TEST_CELLS }),
  );
  service = startWithWorldChannel(programs.path('topology-service/main.ts'), file);
  const listening = await service.listening;
  clients = topologyClients(String(listening.grpc));
  await updateClaims(clients, 3, [claimOf('route', 'toolbox')]);
}, 120_000);

afterAll(async () => {
  clients?.close();
  await service?.stop();
  programs?.cleanup();
  await cleanup();
});

const classify = (route: string) =>
  callUnary<ClassifyResponse__Output>((md, o, cb) =>
    clients.classify.Classify({ claim: { route } }, md, o, cb),
  );

describe('Topology Service over a world channel', () => {
  it('answers control requests and journals every call, fault included', async () => {
    expect(await service.ok('topology-service', 'failNext', { count: 2, code: 'UNAVAILABLE' })).toEqual({
      count: 2,
    });
    await expect(classify('toolbox')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    await expect(classify('toolbox')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((await classify('toolbox')).proxy?.address).toBe('127.0.0.3:4443');
    const seen = await service.entries((e) => e.endpoint === TOPOLOGY_METHODS.classify, 3);
    expect(seen.map((e) => [e.status, e.fault?.kind])).toEqual([
      ['UNAVAILABLE', 'failNext'],
      ['UNAVAILABLE', 'failNext'],
      ['OK', undefined],
    ]);
    expect(seen[2]).toMatchObject({
      cell: null,
      service: 'topology-service',
      fields: { cellName: 'cell-3' },
    });
    const commit = await service.entries((e) => e.endpoint === TOPOLOGY_METHODS.commitUpdate);
    expect(commit[0]?.fields).toMatchObject({ cellName: 'cell-3', created: 1 });
  });

  it('answer {id}, reset, and refusals of bad arguments and unknown ops', async () => {
    const answered = await service.ok('topology-service', 'answer', {
      claim: { type: 'route', value: 'x' },
      address: 'https://h:1',
    });
    expect(answered).toEqual({ id: expect.any(Number) });
    expect((await classify('x')).proxy?.address).toBe('https://h:1');
    expect(await service.ok('topology-service', 'reset', {})).toEqual({});
    await expect(classify('x')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    const bad = await service.control('topology-service', 'latency', { ms: -5 });
    expect(bad).toMatchObject({ ok: false, error: expect.stringContaining('ms must be') });
    const unknown = await service.control('topology-service', 'explode', {});
    expect(unknown).toMatchObject({ ok: false, error: 'unknown control op topology-service explode' });
  });
});
