import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GetCellsResponse__Output } from '../lib/generated/gitlab/cells/topology_service/GetCellsResponse.js';
import { waitUntil } from '../test/helpers/poll.js';
import { type ClientTls, callUnary } from './client.js';
import {
  cleanup,
  makeTestPki,
  type StartedTopology,
  startTopology,
  type TestPki,
} from './test-support/harness.js';

const run = promisify(execFile);
let pki: TestPki;

beforeAll(async () => {
  pki = await makeTestPki();
}, 60_000);

afterAll(cleanup);

function getCells(ts: StartedTopology, tls?: ClientTls) {
  const c = ts.clients(tls);
  return callUnary<GetCellsResponse__Output>((md, o, cb) => c.classify.GetCells({}, md, o, cb), {
    deadlineMs: 5_000,
  });
}

async function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('curl', ['-sS', ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const body = '{"type":"FIRST_CELL"}';

describe('TLS', () => {
  let ts: StartedTopology;
  beforeAll(async () => {
    ts = await startTopology({ tlsCertFile: pki.serverCertFile, tlsKeyFile: pki.serverKeyFile });
  });

  it('announces it, and gRPC works for a client trusting the CA', async () => {
    expect(ts.listening).toMatchObject({ tls: true, mtls: false });
    const res = await getCells(ts, { ca: readFileSync(pki.caFile) });
    expect(res.cells).toHaveLength(3);
  });

  it('a plaintext gRPC client fails (UNAVAILABLE)', async () => {
    await expect(getCells(ts)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });

  it('REST over https with curl --cacert', async () => {
    const res = await curl(['--cacert', pki.caFile, '-X', 'POST', `${ts.http}/v1/classify`, '-d', body]);
    expect(ts.http).toMatch(/^https:\/\//);
    expect(res).toMatchObject({ code: 0 });
    expect(JSON.parse(res.stdout)).toMatchObject({ action: 'PROXY', proxy: { address: 'cell-1.example' } });
  });
});

describe('mTLS', () => {
  let ts: StartedTopology;
  const client = (): ClientTls => ({
    ca: readFileSync(pki.caFile),
    cert: readFileSync(pki.clientCertFile),
    key: readFileSync(pki.clientKeyFile),
  });
  beforeAll(async () => {
    ts = await startTopology({
      tlsCertFile: pki.serverCertFile,
      tlsKeyFile: pki.serverKeyFile,
      tlsClientCaFile: pki.caFile,
    });
  });

  it('gRPC: a certificate from the CA passes; none, or a stranger’s, is refused', async () => {
    expect(ts.listening).toMatchObject({ tls: true, mtls: true });
    expect((await getCells(ts, client())).cells).toHaveLength(3);
    await expect(getCells(ts, { ca: readFileSync(pki.caFile) })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    const stranger = {
      ...client(),
      cert: readFileSync(pki.strangerCertFile),
      key: readFileSync(pki.strangerKeyFile),
    };
    await expect(getCells(ts, stranger)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });

  it('REST: curl with the client certificate passes; without one the handshake fails and is logged', async () => {
    const ok = await curl([
      '--cacert',
      pki.caFile,
      '--cert',
      pki.clientCertFile,
      '--key',
      pki.clientKeyFile,
      '-X',
      'POST',
      `${ts.http}/v1/classify`,
      '-d',
      body,
    ]);
    expect(ok).toMatchObject({ code: 0 });
    expect(JSON.parse(ok.stdout)).toMatchObject({ action: 'PROXY' });
    const refused = await curl(['--cacert', pki.caFile, '-X', 'POST', `${ts.http}/v1/classify`, '-d', body]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    await waitUntil(
      () => ts.log.lines.some((l) => l.msg === 'TLS handshake failed' && l.transport === 'rest'),
      5_000,
      'the refused handshake in the log',
    );
  });
});
