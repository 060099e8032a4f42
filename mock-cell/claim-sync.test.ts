import { afterEach, describe, expect, it } from 'vitest';
import type { ClassifyResponse__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { Claim } from '../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { callUnary, type TopologyClients } from '../topology-service/client.js';
import { cleanup, startTopology } from '../topology-service/test-support/harness.js';
import { sshKeyFingerprint } from './claims.js';
import { startCells } from './server.js';
import { CELLS, demoModel, shellHeaders, testDeps } from './test-support/fixtures.js';

afterEach(cleanup);

function classify(c: TopologyClients, claim: Claim): Promise<ClassifyResponse__Output> {
  return callUnary<ClassifyResponse__Output>((md, o, cb) => c.classify.Classify({ claim }, md, o, cb), {
    deadlineMs: 2000,
  });
}

/** The Topology Service with the demo cells (address 127.0.0.<id>) and every demo cell serving. */
async function setup() {
  const model = demoModel();
  const cells = model.cells().map((c) => ({ id: c.id, name: c.name, address: `127.0.0.${c.id + 1}` }));
  const ts = await startTopology({ cells });
  const listen = CELLS.map((cell) => ({ cell, host: '127.0.0.1', port: 0 }));
  const running = await startCells(model, listen, testDeps(), ts.grpc);
  const clients = ts.clients();
  const addressOf = (name: string) => cells.find((c) => c.name === name)?.address;
  return { model, ts, running, clients, addressOf, close: () => running.close() };
}

describe('claims registered with the Topology Service', () => {
  it('registers routes, organization paths and key fingerprints at start; a move re-claims', async () => {
    const { model, running, clients, addressOf, close } = await setup();
    try {
      expect((await classify(clients, { route: 'my-company' })).proxy?.address).toBe(addressOf('cell_eu0'));
      expect((await classify(clients, { route: 'gitlab-org' })).proxy?.address).toBe(addressOf('cell_us0'));
      expect((await classify(clients, { organization_path: 'my-organization' })).proxy?.address).toBe(
        addressOf('cell_eu0'),
      );
      const alice = model.keys().find((k) => k.user === 'alice');
      const fp = sshKeyFingerprint(alice as { key: string });
      expect(fp).toMatch(/^[A-Za-z0-9+/]{43}$/);
      expect((await classify(clients, { ssh_key_fingerprint: fp })).proxy?.address).toBe(
        addressOf('cell_eu0'),
      );

      const eu0 = running.cells.find((c) => c.cell === 'cell_eu0')?.url as string;
      const res = await fetch(`${eu0}/api/v4/internal/admin/organizations/my-organization/move`, {
        method: 'POST',
        headers: { ...(await shellHeaders()), 'content-type': 'application/json' },
        body: JSON.stringify({ cell: 'cell_eu1' }),
      });
      expect(res.status).toBe(200);
      expect((await classify(clients, { route: 'my-company' })).proxy?.address).toBe(addressOf('cell_eu1'));
      expect((await classify(clients, { ssh_key_fingerprint: fp })).proxy?.address).toBe(
        addressOf('cell_eu1'),
      );
    } finally {
      await close();
    }
  });

  it('starts anyway when the Topology Service is unreachable', async () => {
    const model = demoModel();
    const ts = await startTopology();
    await ts.stop();
    const started = Date.now();
    const running = await startCells(
      model,
      [{ cell: 'cell_us0', host: '127.0.0.1', port: 0 }],
      testDeps(),
      ts.grpc,
    );
    await running.close();
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 20_000);
});
