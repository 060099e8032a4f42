import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { claimOf, updateClaims } from '../../topology-service/client.js';
import { topologyPackage } from '../../topology-service/protos.js';
import { cleanup, onCleanup, startTopology } from '../../topology-service/test-support/harness.js';
import { CellDirectory } from '../cells/directory.js';
import type { CellConfig } from '../config.js';
import { createMetrics } from '../metrics.js';
import type { Classification } from '../routing/classifier.js';
import { buildCellUrl } from './cell-url.js';
import { keyFingerprint, TopologyLearner, topLevelRoute } from './learner.js';
import { ATTEMPTS, isRetried, TopologyResolver } from './resolver.js';
import { RestClassifier } from './rest-classify.js';

afterEach(cleanup);
const log = createLogger('router-topology-test', 'silent');
const PORT = 18443;
const CELLS: CellConfig[] = [
  { id: 1, name: 'cell-1', legacy: true, region: 'us', url: `http://127.0.0.1:${PORT}` },
  { id: 2, name: 'cell-2', legacy: false, region: 'us', url: `http://127.0.0.2:${PORT}` },
  { id: 3, name: 'cell-3', legacy: false, region: 'eu', url: `http://127.0.0.3:${PORT}` },
];
const TS_CELLS = [
  { id: 1, name: 'cell-1', address: '127.0.0.1', sessionPrefix: 'cell-1' },
  { id: 2, name: 'cell-2', address: '127.0.0.2:9999', sessionPrefix: 'cell-2' },
  { id: 3, name: 'cell-3', address: '127.0.0.3', sessionPrefix: 'cell-3' },
];
const ctx = { requestId: 'req-1', log };
const fallback: Classification = { cell: CELLS[0] as CellConfig, via: 'learn', source: 'fallback' };

async function setup() {
  const ts = await startTopology({ cells: TS_CELLS });
  const cells = new CellDirectory(CELLS, 'us');
  onCleanup(() => cells.close());
  const metrics = createMetrics();
  const resolver = new TopologyResolver(cells, metrics, log, {
    address: ts.grpc,
    cellEndpoint: { scheme: 'http', port: PORT },
    timeoutMs: 1000,
  });
  onCleanup(() => resolver.close());
  return { ts, cells, metrics, resolver };
}

describe('buildCellUrl (gitlab-shell buildCellURL)', () => {
  it('keeps the host, replaces the port, rejects what gitlab-shell rejects', () => {
    const ep = { scheme: 'https' as const, port: 8443 };
    expect(buildCellUrl('cell-2.example', ep)).toBe('https://cell-2.example:8443');
    expect(buildCellUrl('127.0.0.3:4443', ep)).toBe('https://127.0.0.3:8443');
    for (const bad of ['', ':443', 'http://cell', 'cell/x', '::1', '[::1]:443']) {
      expect(buildCellUrl(bad, ep)).toBeUndefined();
    }
  });

  it('takes the route claim as gitlab-shell does', () => {
    expect(topLevelRoute('/gitlab-org/gitlab.git')).toBe('gitlab-org');
    expect(topLevelRoute('my-company.git')).toBe('my-company');
    expect(keyFingerprint(Buffer.from('key').toString('base64'))).toMatch(/^[A-Za-z0-9+/]{43}$/);
  });

  it('retries transient codes and non-gRPC errors only', () => {
    expect([14, 8, 10, 13, 4, 2].every((code) => isRetried({ code }))).toBe(true);
    expect(isRetried(new Error('x'))).toBe(true);
    expect([3, 5, 7, 16].some((code) => isRetried({ code }))).toBe(false);
  });
});

describe('TopologyResolver and TopologyLearner', () => {
  it('routes a claimed route to the cell URL, NOT_FOUND to the legacy cell without retrying', async () => {
    const { ts, metrics, resolver } = await setup();
    await updateClaims(ts.clients(), 3, [claimOf('route', 'my-company')]);
    const learner = new TopologyLearner(resolver);
    const asked = CELLS[0] as CellConfig;
    expect(await learner.learn(asked, 'GET', '/my-company/my-project', ctx)).toEqual({
      path: '/my-company',
      cell: 'cell-3',
      source: 'routable',
      exact: false,
      cacheTtl: 0,
    });
    const before = ts.log.calls('Classify').length;
    const unknown = await learner.learn(asked, 'GET', '/nobody/x', ctx);
    expect(unknown).toMatchObject({ cell: 'cell-1', source: 'fallback' });
    expect(ts.log.calls('Classify').length - before).toBe(1);
    expect(metrics).toMatchObject({ topologyClassifies: 2, topologyNotFound: 1, topologyErrors: 0 });
  });

  it('uses a cell of its own for an address no configured cell has', async () => {
    const { resolver, cells } = await setup();
    const cell = resolver.cellOfAddress('10.9.8.7:1');
    expect(cell).toMatchObject({ name: `topology:10.9.8.7:${PORT}`, url: `http://10.9.8.7:${PORT}` });
    expect(cells.get(cell?.name as string)).toBe(cell);
    expect(resolver.cellOfAddress('127.0.0.2')).toBe(CELLS[1]);
  });

  it('service down: 3 attempts, then the legacy cell, counted, within the backoff', async () => {
    const { ts, metrics, resolver } = await setup();
    await ts.stop();
    const started = Date.now();
    const r = await resolver.resolve(claimOf('route', 'my-company'), ctx);
    expect(r).toEqual({ outcome: 'failed', cell: CELLS[0] });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(metrics.topologyErrors).toBe(1);
    await expect(
      new TopologyLearner(resolver).learn(CELLS[0] as CellConfig, 'GET', '/a', ctx),
    ).rejects.toThrow();
    expect(ATTEMPTS).toBe(3);
  });
});

/** A Classify server that always fails with `code`, counting the attempts and their times. */
async function failingServer(code: grpc.status): Promise<{ address: string; times: number[] }> {
  const server = new grpc.Server();
  const times: number[] = [];
  server.addService(topologyPackage().ClassifyService.service, {
    Classify: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => {
      times.push(Date.now());
      cb({ code, details: 'test' });
    },
    GetCells: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, { cells: [] }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  onCleanup(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  return { address: `127.0.0.1:${port}`, times };
}

describe('retries as gitlab-shell', () => {
  for (const [code, attempts] of [
    [grpc.status.UNAVAILABLE, 3],
    [grpc.status.INTERNAL, 3],
    [grpc.status.INVALID_ARGUMENT, 1],
    [grpc.status.PERMISSION_DENIED, 1],
  ] as const) {
    it(`${grpc.status[code]}: ${attempts} attempt(s), then the legacy cell`, async () => {
      const { address, times } = await failingServer(code);
      const cells = new CellDirectory(CELLS, 'us');
      onCleanup(() => cells.close());
      const metrics = createMetrics();
      const resolver = new TopologyResolver(cells, metrics, log, {
        address,
        cellEndpoint: { scheme: 'http', port: PORT },
        timeoutMs: 1000,
      });
      onCleanup(() => resolver.close());
      expect(await resolver.resolve(claimOf('route', 'x'), ctx)).toEqual({
        outcome: 'failed',
        cell: CELLS[0],
      });
      expect(times.length).toBe(attempts);
      if (attempts === 3) {
        expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(45);
        expect((times[2] as number) - (times[1] as number)).toBeGreaterThanOrEqual(240);
      }
      expect(metrics.topologyErrors).toBe(1);
    });
  }
});

describe('RestClassifier (HTTP front classify rules)', () => {
  const rule = (type: 'CELL_ID' | 'SESSION_PREFIX', value: string) =>
    ({ kind: 'classify', type, value, ruleId: 'r', action: 'classify' }) as const;

  it('asks POST /v1/classify and proxies to the cell of proxy.address', async () => {
    const { ts, metrics, resolver } = await setup();
    const rest = new RestClassifier(ts.http, resolver, metrics, 1000);
    expect(await rest.decide(rule('CELL_ID', '2'), fallback, ctx)).toEqual({ cell: CELLS[1], by: 'rule' });
    expect(await rest.decide(rule('SESSION_PREFIX', 'cell-3'), fallback, ctx)).toEqual({
      cell: CELLS[2],
      by: 'rule',
    });
    expect(await rest.decide(rule('CELL_ID', '77'), fallback, ctx)).toMatchObject({
      cell: CELLS[0],
      by: 'legacy',
    });
    expect(ts.log.calls('POST /v1/classify').length).toBe(3);
    // A path that decides its cell is not classified.
    const routable: Classification = { ...fallback, source: 'routable' };
    expect(await rest.decide(rule('CELL_ID', '2'), routable, ctx)).toBeUndefined();
    expect(metrics).toMatchObject({ topologyClassifies: 3, topologyNotFound: 1, topologyErrors: 0 });
  });

  it('service down: legacy cell, counted, no hang', async () => {
    const { ts, metrics, resolver } = await setup();
    const rest = new RestClassifier(ts.http, resolver, metrics, 1000);
    await ts.stop();
    const started = Date.now();
    expect(await rest.decide(rule('CELL_ID', '2'), fallback, ctx)).toMatchObject({
      cell: CELLS[0],
      by: 'legacy',
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(metrics.topologyErrors).toBe(1);
  });
});
