import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { claimOf, updateClaims } from './client.js';
import {
  cleanup,
  type StartedTopology,
  startTopology,
  tempDir,
  writeSecret,
} from './test-support/harness.js';

afterEach(cleanup);

const run = promisify(execFile);

/** The real curl binary; `-D -` puts the status line and headers before the body. */
async function curl(args: string[]): Promise<{ status: number; headers: string; body: string }> {
  const { stdout } = await run('curl', ['-sS', '-D', '-', ...args]);
  const split = stdout.indexOf('\r\n\r\n');
  const headers = stdout.slice(0, split);
  return {
    status: Number(headers.split(' ')[1]),
    headers: headers.toLowerCase(),
    body: stdout.slice(split + 4),
  };
}

async function started(file: Record<string, unknown> = {}): Promise<StartedTopology> {
  const ts = await startTopology(file);
  await updateClaims(ts.clients(), 2, [claimOf('route', 'gitlab-org'), claimOf('project_id', 7)]);
  return ts;
}

async function post(ts: StartedTopology, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${ts.http}/v1/classify`, { method: 'POST', headers, body });
  return { status: res.status, json: (await res.json()) as unknown };
}

describe('POST /v1/classify with curl, as the document shows it (§1.6)', () => {
  it('{"type":"SESSION_PREFIX","value":"cell-2"} → PROXY cell-2.example', async () => {
    const ts = await started();
    const res = await curl([
      '-X',
      'POST',
      `${ts.http}/v1/classify`,
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"type":"SESSION_PREFIX","value":"cell-2"}',
    ]);
    expect(res.status).toBe(200);
    expect(res.headers).toContain('content-type: application/json');
    expect(res.headers).toContain('grpc-metadata-content-type: application/grpc');
    expect(res.body).toBe('{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":null}');
  });

  it('{"claims":[{"route":"gitlab-org"}]} → PROXY cell-2.example with matchedClaim', async () => {
    const ts = await started();
    const res = await curl([
      '-X',
      'POST',
      `${ts.http}/v1/classify`,
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"claims":[{"route":"gitlab-org"}]}',
    ]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      action: 'PROXY',
      proxy: { address: 'cell-2.example' },
      matchedClaim: { route: 'gitlab-org' },
    });
  });

  it('an unknown claim → 404 {code: 5, message, details: []}', async () => {
    const ts = await started();
    const res = await curl(['-X', 'POST', `${ts.http}/v1/classify`, '-d', '{"claims":[{"route":"nobody"}]}']);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({
      code: 5,
      message: 'claim does not exist: route "nobody"',
      details: [],
    });
  });
});

describe('REST mapping (grpc-gateway v2 defaults)', () => {
  it('int64 comes back as a string, enums by name, unknown fields and unknown enum names are dropped', async () => {
    const ts = await started();
    expect(await post(ts, '{"claims":[{"projectId":7}],"extra":{"a":1}}')).toEqual({
      status: 200,
      json: { action: 'PROXY', proxy: { address: 'cell-2.example' }, matchedClaim: { projectId: '7' } },
    });
    expect(await post(ts, '{"type":"SOME_NEWER_TYPE","value":"x"}')).toEqual({
      status: 400,
      json: { code: 3, message: 'invalid type: "UNSPECIFIED"', details: [] },
    });
  });

  it.each([
    ['{"claims":', /^proto: syntax error/],
    ['[1]', 'proto: gitlab.cells.topology_service.ClassifyRequest must be a JSON object'],
    ['{"value":5}', 'proto: invalid value for string field value: 5'],
    ['{"claims":[{"userId":"4x"}]}', 'proto: invalid value for int64 field userId: "4x"'],
    ['{"claims":[{"route":"a","username":"b"}]}', 'proto: oneof claim is already set'],
    ['', 'invalid type: "UNSPECIFIED"'],
  ])('%s → 400 InvalidArgument', async (body, message) => {
    const ts = await started();
    const res = await post(ts, body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 3, details: [] });
    expect((res.json as { message: string }).message).toMatch(message);
  });

  it('a field given by both its JSON and proto name is refused', async () => {
    const ts = await started();
    expect(await post(ts, '{"claims":[{"projectId":7,"project_id":7}]}')).toMatchObject({ status: 400 });
  });

  it('routing errors as grpc-gateway answers them: 404 Not Found, 501 Method Not Allowed', async () => {
    const ts = await started();
    const notFound = await fetch(`${ts.http}/v1/cells`);
    expect([notFound.status, await notFound.json()]).toEqual([
      404,
      { code: 5, message: 'Not Found', details: [] },
    ]);
    const wrongMethod = await fetch(`${ts.http}/v1/classify`);
    expect([wrongMethod.status, await wrongMethod.json()]).toEqual([
      501,
      { code: 12, message: 'Method Not Allowed', details: [] },
    ]);
  });

  it('readiness and liveness answer 200 {}; readiness 503 once stopping', async () => {
    const ts = await started();
    for (const path of ['/readiness', '/liveness']) {
      const res = await fetch(`${ts.http}${path}`);
      expect([res.status, await res.json()]).toEqual([200, {}]);
    }
    ts.service.core.ready = false;
    const res = await fetch(`${ts.http}/readiness`);
    expect([res.status, await res.json()]).toEqual([
      503,
      { code: 14, message: 'shutting down', details: [] },
    ]);
  });
});

describe('CF-Access service token', () => {
  async function guarded(): Promise<StartedTopology> {
    const dir = tempDir();
    return started({
      cfAccessClientId: 'router-token-a.access',
      cfAccessClientSecretFile: writeSecret(dir, 'cf-secret', 's3cret-a'),
    });
  }
  const body = '{"claims":[{"route":"gitlab-org"}]}';

  it('the configured token passes (curl with both headers); the secret never reaches the log', async () => {
    const ts = await guarded();
    const res = await curl([
      '-X',
      'POST',
      `${ts.http}/v1/classify`,
      '-H',
      'CF-Access-Client-Id: router-token-a.access',
      '-H',
      'CF-Access-Client-Secret: s3cret-a',
      '-d',
      body,
    ]);
    expect(res.status).toBe(200);
    expect(ts.log.calls('POST /v1/classify').at(-1)).toMatchObject({
      cf_access_client_id: 'router-token-a.access',
    });
    expect(JSON.stringify(ts.log.lines)).not.toContain('s3cret-a');
  });

  it('missing headers → 401 UNAUTHENTICATED, a wrong token → 403 PERMISSION_DENIED, both logged', async () => {
    const ts = await guarded();
    expect(await post(ts, body)).toEqual({
      status: 401,
      json: { code: 16, message: 'missing CF-Access-Client-Id or CF-Access-Client-Secret', details: [] },
    });
    const wrong = { 'CF-Access-Client-Id': 'router-token-a.access', 'CF-Access-Client-Secret': 'old-secret' };
    expect(await post(ts, body, wrong)).toEqual({
      status: 403,
      json: { code: 7, message: 'service token is not allowed', details: [] },
    });
    expect(ts.log.calls('POST /v1/classify').map((l) => l.error_code)).toEqual([
      'TOPOLOGY_UNAUTHENTICATED',
      'TOPOLOGY_PERMISSION_DENIED',
    ]);
  });

  it('probes need no token', async () => {
    const ts = await guarded();
    expect((await fetch(`${ts.http}/readiness`)).status).toBe(200);
  });
});
