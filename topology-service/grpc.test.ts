import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClassifyRequest } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { BeginUpdateRequest } from '../lib/generated/gitlab/cells/topology_service/claims/v1/BeginUpdateRequest.js';
import type { ListRecordsResponse__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/ListRecordsResponse.js';
import type { GetCellResponse__Output } from '../lib/generated/gitlab/cells/topology_service/GetCellResponse.js';
import type { GetCellsResponse__Output } from '../lib/generated/gitlab/cells/topology_service/GetCellsResponse.js';
import { callUnary, claimOf, claimRecord, type TopologyClients, updateClaims } from './client.js';
import { cleanup, type StartedTopology, startTopology } from './test-support/harness.js';

afterEach(cleanup);

function classify(c: TopologyClients, req: ClassifyRequest, metadata?: grpc.Metadata) {
  return callUnary<ClassifyResponse__Output>(
    (md, o, cb) => c.classify.Classify(req, md, o, cb),
    metadata ? { metadata } : {},
  );
}

async function started(
  file: Record<string, unknown> = {},
): Promise<{ ts: StartedTopology; c: TopologyClients }> {
  const ts = await startTopology(file);
  return { ts, c: ts.clients() };
}

describe('ClassifyService/Classify over gRPC', () => {
  it('answers PROXY with the address of the cell holding the claim, and logs the call', async () => {
    const { ts, c } = await started();
    await updateClaims(c, 3, [claimOf('route', 'toolbox')]);
    const metadata = new grpc.Metadata();
    metadata.set('x-gitlab-correlation-id', 'corr-1');
    const res = await classify(c, { claim: { route: 'toolbox' } }, metadata);
    expect(res).toMatchObject({
      action: 'PROXY',
      proxy: { address: '127.0.0.3:4443' },
      matched_claim: { route: 'toolbox' },
    });
    expect(ts.log.calls('Classify').at(-1)).toMatchObject({
      code: 'OK',
      by: 'claim',
      key: 'route "toolbox"',
      cell_id: 3,
      correlation_id: 'corr-1',
    });
  });

  it('compares routes without case, as GitLab paths are', async () => {
    const { c } = await started();
    await updateClaims(c, 2, [claimOf('route', 'GitLab-Org')]);
    const res = await classify(c, { claims: [{ route: 'gitlab-ORG' }] });
    expect(res.proxy?.address).toBe('cell-2.example');
  });

  it('NOT_FOUND for a claim nobody holds, logged at info with its code', async () => {
    const { ts, c } = await started();
    await expect(classify(c, { claim: { username: 'ghost' } })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: 'claim does not exist: username "ghost"',
    });
    expect(ts.log.calls('Classify').at(-1)).toMatchObject({
      level: 30,
      code: 'NOT_FOUND',
      error_code: 'TOPOLOGY_CLAIM_NOT_FOUND',
    });
  });

  it.each([
    [{}, 'invalid type: "UNSPECIFIED"'],
    [{ type: 'SESSION_PREFIX' }, 'SESSION_PREFIX needs a value'],
    [{ type: 'CELL_ID', value: 'a' }, 'invalid cell id: "a"'],
    [{ claims: [{}] }, 'claim has no value set'],
    [{ claim: { ssh_key_fingerprint: 'SHA256:abc' } }, /^invalid ssh_key_fingerprint/],
    [{ claims: [{ user_id: '-1' }] }, 'invalid user_id: -1'],
  ] as [ClassifyRequest, string | RegExp][])('INVALID_ARGUMENT for %j', async (req, details) => {
    const { c } = await started();
    const err = await classify(c, req).catch((e: grpc.ServiceError) => e);
    expect(err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect((err as grpc.ServiceError).details).toMatch(details);
  });

  it('FIRST_CELL is the first configured cell; SESSION_PREFIX and CELL_ID use the cell list', async () => {
    const { c } = await started();
    expect((await classify(c, { type: 'FIRST_CELL' })).proxy?.address).toBe('cell-1.example');
    expect((await classify(c, { type: 'SESSION_PREFIX', value: 'cell-3' })).proxy?.address).toBe(
      '127.0.0.3:4443',
    );
    expect((await classify(c, { type: 'CELL_ID', value: '2' })).proxy?.address).toBe('cell-2.example');
    await expect(classify(c, { type: 'SESSION_PREFIX', value: 'cell-9' })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
  });
});

describe('claims.v1.ClaimService', () => {
  it('a re-claim replaces the cell’s record; another cell’s claim moves the key (organization move)', async () => {
    const { ts, c } = await started();
    await updateClaims(c, 2, [claimOf('organization_path', 'acme'), claimOf('route', 'acme-group')]);
    await updateClaims(c, 2, [claimOf('route', 'acme-group')]);
    expect((await classify(c, { claims: [{ route: 'acme-group' }] })).proxy?.address).toBe('cell-2.example');
    // The organization moves to cell 3: cell 3 claims its routes, cell 2 drops what it kept.
    await updateClaims(c, 3, [claimOf('organization_path', 'acme'), claimOf('route', 'acme-group')]);
    expect((await classify(c, { claims: [{ route: 'acme-group' }] })).proxy?.address).toBe('127.0.0.3:4443');
    expect((await classify(c, { claims: [{ organization_path: 'acme' }] })).proxy?.address).toBe(
      '127.0.0.3:4443',
    );
    expect(ts.log.lines.filter((l) => l.msg === 'claim moved')).toHaveLength(2);
    expect(ts.log.calls('CommitUpdate').at(-1)).toMatchObject({ cell_id: 3, created: 2, moved: 2 });
    const listed = await callUnary<ListRecordsResponse__Output>((md, o, cb) =>
      c.claims.ListRecords({ cell_id: '2' }, md, o, cb),
    );
    expect(listed.records ?? []).toEqual([]);
  });

  it('nothing is visible before CommitUpdate; RollbackUpdate drops the lease; destroys remove', async () => {
    const { c } = await started();
    const begun = await callUnary<{ lease_uuid?: { value?: string } }>((md, o, cb) =>
      c.claims.BeginUpdate(
        { cell_id: '2', create_records: [claimRecord(claimOf('project_id', 7))] },
        md,
        o,
        cb,
      ),
    );
    await expect(classify(c, { claims: [{ project_id: '7' }] })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
    const lease = { cell_id: '2', lease_uuid: { value: begun.lease_uuid?.value ?? '' } };
    await callUnary((md, o, cb) => c.claims.RollbackUpdate(lease, md, o, cb));
    await expect(callUnary((md, o, cb) => c.claims.CommitUpdate(lease, md, o, cb))).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
    await updateClaims(c, 2, [claimOf('project_id', 7)]);
    expect((await classify(c, { claims: [{ project_id: '7' }] })).proxy?.address).toBe('cell-2.example');
    await updateClaims(c, 2, [], [claimOf('project_id', 7)]);
    await expect(classify(c, { claims: [{ project_id: '7' }] })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
  });

  it('claimConflict: reject answers ALREADY_EXISTS and keeps the holder', async () => {
    const { c } = await started({ claimConflict: 'reject' });
    await updateClaims(c, 2, [claimOf('username', 'alice')]);
    await expect(updateClaims(c, 3, [claimOf('username', 'alice')])).rejects.toMatchObject({
      code: grpc.status.ALREADY_EXISTS,
      details: 'username "alice" is claimed by cell 2',
    });
    expect((await classify(c, { claims: [{ username: 'alice' }] })).proxy?.address).toBe('cell-2.example');
  });

  it.each([
    [
      { cell_id: '9', create_records: [claimRecord(claimOf('route', 'x'))] },
      grpc.status.NOT_FOUND,
      'cell 9 does not exist',
    ],
    [
      { cell_id: '2', create_records: [claimRecord(claimOf('route', 'a/b'))] },
      grpc.status.INVALID_ARGUMENT,
      'only top-level routes are claimed: route "a/b"',
    ],
    [
      { cell_id: '2', create_records: [{}] },
      grpc.status.INVALID_ARGUMENT,
      'record has neither a claim nor a bucket',
    ],
    [
      { cell_id: '2', create_records: [{ claim: { route: 'a' }, bucket: { type: 'ROUTES', value: 'b' } }] },
      grpc.status.INVALID_ARGUMENT,
      'record names two claims: route "a" and route "b"',
    ],
  ] as [BeginUpdateRequest, grpc.status, string][])('BeginUpdate %j → %i', async (req, code, details) => {
    const { c } = await started();
    await expect(callUnary((md, o, cb) => c.claims.BeginUpdate(req, md, o, cb))).rejects.toMatchObject({
      code,
      details,
    });
  });

  it('a bucket alone (older cells) is a claim too, and GetRecord finds it with its cell', async () => {
    const { c } = await started();
    await callUnary<{ lease_uuid?: { value?: string } }>((md, o, cb) =>
      c.claims.BeginUpdate(
        { cell_id: '3', create_records: [{ bucket: { type: 'USERNAMES', value: 'Bob' } }] },
        md,
        o,
        cb,
      ),
    ).then((b) =>
      callUnary((md, o, cb) =>
        c.claims.CommitUpdate({ cell_id: '3', lease_uuid: b.lease_uuid ?? null }, md, o, cb),
      ),
    );
    const found = await callUnary<{
      record?: { cell_id?: string; metadata?: unknown };
      cell_info?: { id?: string };
    }>((md, o, cb) => c.claims.GetRecord({ claim: { username: 'bob' } }, md, o, cb));
    expect(found.record).toMatchObject({
      cell_id: '3',
      metadata: { bucket: { type: 'USERNAMES', value: 'bob' } },
    });
    expect(found.cell_info?.id).toBe('3');
  });
});

describe('GetCells, GetCell, HealthService', () => {
  it('GetCells lists the configured cells on both services; GetCell finds one or NOT_FOUND', async () => {
    const { c } = await started();
    const fromClassify = await callUnary<GetCellsResponse__Output>((md, o, cb) =>
      c.classify.GetCells({}, md, o, cb),
    );
    const fromClaims = await callUnary<GetCellsResponse__Output>((md, o, cb) =>
      c.claims.GetCells({}, md, o, cb),
    );
    expect(fromClassify).toEqual(fromClaims);
    expect(
      (fromClassify.cells ?? []).map((cell) => [cell.id, cell.name, cell.address, cell.session_prefix]),
    ).toEqual([
      ['1', 'cell-1', 'cell-1.example', 'cell-1'],
      ['2', 'cell-2', 'cell-2.example', 'cell-2'],
      ['3', 'cell-3', '127.0.0.3:4443', 'cell-3'],
    ]);
    const one = await callUnary<GetCellResponse__Output>((md, o, cb) =>
      c.cells.GetCell({ cell_id: '2' }, md, o, cb),
    );
    expect(one.cell_info).toMatchObject({ id: '2', address: 'cell-2.example' });
    await expect(
      callUnary((md, o, cb) => c.cells.GetCell({ cell_id: '7' }, md, o, cb)),
    ).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: 'cell 7 does not exist',
    });
  });

  it('readiness fails with UNAVAILABLE once stopping; liveness answers', async () => {
    const { ts, c } = await started();
    await callUnary((md, o, cb) => c.health.ReadinessProbe({}, md, o, cb));
    await callUnary((md, o, cb) => c.health.LivenessProbe({}, md, o, cb));
    ts.service.core.ready = false;
    await expect(callUnary((md, o, cb) => c.health.ReadinessProbe({}, md, o, cb))).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
  });
});
