import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClassifyRequest } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import { ControlArgumentError } from '../lib/world-channel.js';
import { callUnary, claimOf, type TopologyClients, updateClaims } from './client.js';
import { TOPOLOGY_METHODS } from './protos.js';
import { cleanup, type StartedTopology, startTopology } from './test-support/harness.js';

/** The control ops (`world.ts`) and the journal (`journal.ts`), in process, over real gRPC and REST. */
afterEach(cleanup);

function classify(c: TopologyClients, req: ClassifyRequest) {
  return callUnary<ClassifyResponse__Output>((md, o, cb) => c.classify.Classify(req, md, o, cb));
}

async function started(
  file: Record<string, unknown> = {},
): Promise<{ ts: StartedTopology; c: TopologyClients }> {
  const ts = await startTopology(file);
  const c = ts.clients();
  await updateClaims(c, 2, [claimOf('route', 'gitlab-org')]);
  return { ts, c };
}

async function rest(ts: StartedTopology, body: unknown) {
  const res = await fetch(`${ts.http}/v1/classify`, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const classifies = (ts: StartedTopology) =>
  ts.journal.filter((e) => e.endpoint === TOPOLOGY_METHODS.classify);

describe('Topology Service journal', () => {
  it('journals a Classify with its shape, claim, answer, status and bytes', async () => {
    const { ts, c } = await started();
    await classify(c, { claim: { route: 'gitlab-org' } });
    await expect(classify(c, { claims: [{ route: 'nobody' }] })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
    const [ok, missing] = classifies(ts);
    expect(ok).toMatchObject({
      service: 'topology-service',
      cell: null,
      status: 'OK',
      fields: {
        shape: 'claim',
        claim: { type: 'route', value: 'gitlab-org' },
        action: 'PROXY',
        address: 'cell-2.example',
        cellName: 'cell-2',
      },
    });
    expect(ok?.bytesIn).toBeGreaterThan(0);
    expect(ok?.bytesOut).toBeGreaterThan(0);
    expect(ok?.fault).toBeUndefined();
    expect(missing).toMatchObject({
      status: 'NOT_FOUND',
      fields: { shape: 'claims', claims: [{ type: 'route', value: 'nobody' }] },
    });
  });

  it('journals ClaimService calls with their counts and cell, and REST calls by path and HTTP status', async () => {
    const { ts } = await started();
    const begin = ts.journal.find((e) => e.endpoint === TOPOLOGY_METHODS.beginUpdate);
    expect(begin).toMatchObject({
      status: 'OK',
      fields: { cellId: 2, cellName: 'cell-2', creates: 1, destroys: 0 },
    });
    const commit = ts.journal.find((e) => e.endpoint === TOPOLOGY_METHODS.commitUpdate);
    expect(commit).toMatchObject({ status: 'OK', fields: { cellName: 'cell-2', created: 1 } });
    await rest(ts, { type: 'SESSION_PREFIX', value: 'cell-3' });
    expect(ts.journal.at(-1)).toMatchObject({
      endpoint: '/v1/classify',
      method: 'POST',
      status: 200,
      fields: { shape: 'type', type: 'SESSION_PREFIX', value: 'cell-3', cellName: 'cell-3' },
    });
  });
});

describe('Topology Service control ops', () => {
  it('failNext fails exactly the next N Classify calls, on both transports, then answers again', async () => {
    const { ts, c } = await started();
    expect(ts.service.core.world.failNext({ count: 2, code: 'UNAVAILABLE' })).toEqual({ count: 2 });
    await expect(classify(c, { claim: { route: 'gitlab-org' } })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    expect((await rest(ts, { claims: [{ route: 'gitlab-org' }] })).status).toBe(503);
    expect((await classify(c, { claim: { route: 'gitlab-org' } })).proxy?.address).toBe('cell-2.example');
    const statuses = ts.journal.filter((e) => e.fields?.shape !== undefined).map((e) => e.status);
    expect(statuses).toEqual(['UNAVAILABLE', 503, 'OK']);
    expect(classifies(ts)[0]?.fault).toMatchObject({ kind: 'failNext', code: 'UNAVAILABLE', remaining: 1 });
  });

  it('answer proxies a claim (or every claim) to any address, or answers any gRPC code', async () => {
    const { ts, c } = await started();
    const world = ts.service.core.world;
    world.answer({ address: 'h/x' });
    world.answer({ claim: { type: 'route', value: 'Bogus' }, address: '[::1]:1' });
    world.answer({ claim: { type: 'username', value: 'denied' }, code: 'PERMISSION_DENIED', message: 'no' });
    expect((await classify(c, { claim: { route: 'bogus' } })).proxy?.address).toBe('[::1]:1');
    const any = await classify(c, { claims: [{ route: 'gitlab-org' }] });
    expect(any).toMatchObject({ proxy: { address: 'h/x' }, matched_claim: { route: 'gitlab-org' } });
    await expect(classify(c, { claim: { username: 'denied' } })).rejects.toMatchObject({
      code: grpc.status.PERMISSION_DENIED,
      details: 'no',
    });
    const body = await rest(ts, { claims: [{ username: 'denied' }] });
    expect(body).toEqual({ status: 403, body: { code: 7, message: 'no', details: [] } });
    expect(classifies(ts)[0]).toMatchObject({
      fault: { kind: 'answer', id: 2 },
      fields: { address: '[::1]:1', cellName: null },
    });
    world.reset();
    expect((await classify(c, { claim: { route: 'gitlab-org' } })).proxy?.address).toBe('cell-2.example');
  });

  it('requestShape field5-only answers field 4 as a server built from the newest proto does', async () => {
    const { ts, c } = await started();
    ts.service.core.world.requestShape({ accept: 'field5-only' });
    await expect(classify(c, { claim: { route: 'gitlab-org' } })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'invalid type: "UNSPECIFIED"',
    });
    expect((await classify(c, { claims: [{ route: 'gitlab-org' }] })).proxy?.address).toBe('cell-2.example');
    expect(classifies(ts).map((e) => e.fault?.kind)).toEqual(['requestShape', undefined]);
  });

  it('latency delays every Classify; 0 turns it off', async () => {
    const { ts, c } = await started();
    ts.service.core.world.latency({ ms: 300 });
    const t0 = performance.now();
    await classify(c, { claim: { route: 'gitlab-org' } });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(classifies(ts)[0]?.fault).toEqual({ kind: 'latency', ms: 300 });
    ts.service.core.world.latency({ ms: 0 });
    await classify(c, { claim: { route: 'gitlab-org' } });
    expect(classifies(ts)[1]?.fault).toBeUndefined();
  });

  it('refuses bad arguments with ControlArgumentError', async () => {
    const { ts } = await started();
    const world = ts.service.core.world;
    const bad: Array<() => unknown> = [
      () => world.failNext({ count: 1, code: 'OK' }),
      () => world.failNext({ count: -1, code: 'UNAVAILABLE' }),
      () => world.failNext({ code: 'NOPE', count: 1 }),
      () => world.answer({}),
      () => world.answer({ claim: { type: 'colour', value: 'x' }, address: 'a' }),
      () => world.answer({ address: 'a', code: 'NOT_FOUND' }),
      () => world.latency({ ms: 'slow' }),
      () => world.requestShape({ accept: 'field4-only' }),
      () => world.reset({ now: true }),
    ];
    for (const op of bad) expect(op).toThrow(ControlArgumentError);
  });
});
