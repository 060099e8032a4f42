import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../test/helpers/poll.js';
import { healthHandler } from './health.js';
import { RequestTracker } from './in-flight.js';
import { BridgeMetrics } from './metrics.js';
import { dispatcher } from './observe.js';
import { proxyHandler } from './proxy.js';
import { type RouteHandler, routeTable } from './routes.js';

/** The access lines (and any other line) the dispatcher logs. */
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
    done();
  },
});

/** Stands in for the tunnel handler: answers 200 with a body, or throws when asked to. */
const tunnel: RouteHandler = async (ex, req) => {
  if (req.params.project === 'boom') throw new Error('handler bug');
  ex.begin(200, { 'x-request-id': req.correlationId });
  ex.end([Buffer.from('pack')]);
  return { outcome: 'ok', status: 200, fields: { gl_id: 'user-2', bytes_out: 4 } };
};

let metrics: BridgeMetrics;
let rails: http.Server;
let bridge: http.Server;
let url: string;

const listen = (s: http.Server) =>
  new Promise<string>((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)),
  );

beforeAll(async () => {
  rails = http.createServer((req, res) => {
    res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain' });
    res.end('from rails');
  });
  const railsUrl = await listen(rails);
  const agents = { http: new http.Agent(), https: new https.Agent() };
  metrics = new BridgeMetrics();
  const table = routeTable(
    {
      tunnel: () => tunnel,
      health: healthHandler(() => false),
      proxy: proxyHandler({ railsUrl, agents, metrics }),
    },
    { maxReceivePackBytes: 0 },
  );
  const logger = pino({ level: 'debug' }, sink);
  bridge = http.createServer(
    dispatcher(table, { logger, metrics, requests: new RequestTracker(), isClosing: () => false }),
  );
  url = await listen(bridge);
});
afterAll(async () => {
  bridge?.closeAllConnections();
  rails?.closeAllConnections();
  await Promise.all([new Promise((r) => bridge?.close(r)), new Promise((r) => rails?.close(r))]);
});
beforeEach(() => {
  lines.length = 0;
});

/** One request; resolves once its access line (the line with `outcome`) is written. */
async function request(method: string, path: string, id: string) {
  const res = await fetch(`${url}${path}`, { method, headers: { 'x-request-id': id } });
  const body = await res.text();
  await waitUntil(
    () => lines.some((l) => l.correlation_id === id && 'outcome' in l),
    1000,
    `access line of ${id}`,
  );
  return { status: res.status, body, lines: lines.filter((l) => l.correlation_id === id) };
}

async function requestsTotal(labels: Record<string, string>): Promise<number> {
  const values = (await metrics.requests.get()).values;
  return values
    .filter((v) =>
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
    )
    .reduce((n, v) => n + v.value, 0);
}

describe('observe: one access line and one counter increment per request', () => {
  it.each([
    ['tunnel', 'POST', '/g/p.git/ssh-upload-pack', 'ssh_upload_pack', 'gitaly', 'tunnel', 200, 'ok'],
    ['health', 'GET', '/-/bridge/health', 'health', 'self', 'health', 200, 'ok'],
    ['proxied', 'GET', '/api/v4/internal/check', 'proxy', 'rails', 'proxy', 200, 'ok'],
    ['proxied refusal', 'GET', '/missing', 'proxy', 'rails', 'proxy', 404, 'policy'],
  ] as const)('%s request', async (name, method, path, route, backend, msg, status, outcome) => {
    const before = await requestsTotal({ route, backend, outcome });
    const all = await requestsTotal({});
    const r = await request(method, path, `obs-${name.replace(' ', '-')}`);
    expect(r.status).toBe(status);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatchObject({ msg, route, backend, outcome, status, protocol: 'h1', method, path });
    expect(r.lines[0]?.duration_ms).toEqual(expect.any(Number));
    expect(await requestsTotal({ route, backend, outcome })).toBe(before + 1);
    expect(await requestsTotal({})).toBe(all + 1);
    expect((await metrics.requestDuration.get()).values.length).toBeGreaterThan(0);
  });

  it("adds the handler's fields and the pattern's params to the line", async () => {
    const r = await request('POST', '/g/p.git/ssh-upload-pack', 'obs-fields');
    expect(r.lines[0]).toMatchObject({ project: 'g/p', gl_id: 'user-2', bytes_out: 4 });
  });

  it('counts tunnel rows under the tunnel names too, and only them', async () => {
    const tunnels = async () => (await metrics.tunnels.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await tunnels();
    await request('GET', '/-/bridge/health', 'obs-t1');
    await request('GET', '/api/v4/internal/check', 'obs-t2');
    expect(await tunnels()).toBe(before);
    await request('POST', '/g/p.git/ssh-receive-pack', 'obs-t3');
    expect(await tunnels()).toBe(before + 1);
    const receive = (await metrics.tunnels.get()).values.find((v) => v.labels.route === 'ssh_receive_pack');
    expect(receive?.labels.outcome).toBe('ok');
  });

  it('answers a handler that throws with 500 and logs one system line with the error', async () => {
    const r = await request('POST', '/boom.git/ssh-upload-pack', 'obs-boom');
    expect(r.status).toBe(500);
    expect(r.body).toBe('Internal Server Error\n');
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatchObject({
      level: 50,
      msg: 'tunnel',
      outcome: 'system',
      status: 500,
      reason: 'handler failed',
      err: { message: 'handler bug' },
    });
    expect(await requestsTotal({ route: 'ssh_upload_pack', outcome: 'system' })).toBe(1);
  });

  it('answers HEAD on the health route without a body', async () => {
    const r = await request('HEAD', '/-/bridge/health', 'obs-head');
    expect(r.status).toBe(200);
    expect(r.body).toBe('');
    expect(r.lines[0]).toMatchObject({ route: 'health', outcome: 'ok' });
  });
});
