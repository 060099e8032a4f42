import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../lib/contracts/world.js';
import { projectRoot } from '../lib/proto.js';
import { waitUntil } from '../test/helpers/poll.js';
import type { ServiceSpec } from './supervisor.js';
import { type OpenWorld, openWorld } from './world.js';

const FAKE = join(projectRoot(), 'test', 'helpers', 'fake-world-child.mjs');

let dir: string;
let world: OpenWorld;
let token: string;
const children: ChildProcess[] = [];

function spawnFake(spec: ServiceSpec, env: Record<string, string>): Promise<void> {
  const child = fork(FAKE, [], { env: { ...process.env, FAKE_NAME: spec.name, ...env }, stdio: 'ignore' });
  children.push(child);
  world.router.attach(spec, child);
  return new Promise((resolve) => child.once('message', () => resolve()));
}

const spec = (name: string, controls: ServiceSpec['controls']): ServiceSpec => ({
  name,
  service: 'fake',
  configFile: '/dev/null',
  listen: [],
  controls,
});

async function call(path: string, init: RequestInit = {}, auth = `Bearer ${token}`) {
  const res = await fetch(`${world.contract.control.url}${path}`, {
    ...init,
    headers: { authorization: auth, ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const post = (path: string, args?: unknown) =>
  call(path, { method: 'POST', body: args === undefined ? undefined : JSON.stringify(args) });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'control-server-'));
  world = await openWorld(dir);
  token = readFileSync(world.contract.control.tokenFile, 'utf8').trim();
  await Promise.all([
    spawnFake(
      spec('mock-cell', [
        { target: 'rails', cell: 'cell_a' },
        { target: 'rails', cell: 'cell_b' },
      ]),
      { FAKE_CELL: 'cell_a' },
    ),
    spawnFake(spec('gitaly-cell_a', [{ target: 'gitaly', cell: 'cell_a' }]), {
      FAKE_CELL: 'cell_a',
      FAKE_SERVICE: 'gitaly',
    }),
    spawnFake(spec('topology-service', [{ target: 'topology-service' }]), {
      FAKE_SERVICE: 'topology-service',
      FAKE_NO_RESET: '1',
    }),
  ]);
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await world.close();
  await rm(dir, { recursive: true, force: true });
});

describe('control API', () => {
  it('keeps its token in a mode-600 file and refuses requests without it', async () => {
    expect(statSync(world.contract.control.tokenFile).mode & 0o777).toBe(0o600);
    expect((await call('/targets', {}, '')).status).toBe(401);
    expect((await call('/targets', {}, `Bearer ${token}x`)).status).toBe(401);
    const ok = await call('/targets');
    expect(ok.status).toBe(200);
    expect(ok.body.targets).toEqual({
      'topology-service': true,
      rails: ['cell_a', 'cell_b'],
      gitaly: ['cell_a'],
      world: true,
    });
  });

  it('routes a cell call to the process serving that cell, with its arguments', async () => {
    const r = await post('/control/rails/cell_b/fault', {
      endpoint: '/api/v4/internal/allowed',
      status: 503,
    });
    expect(r).toEqual({
      status: 200,
      body: {
        result: {
          name: 'mock-cell',
          target: 'rails',
          cell: 'cell_b',
          op: 'fault',
          args: { endpoint: '/api/v4/internal/allowed', status: 503 },
        },
      },
    });
  });

  it('answers 404 for an unknown target or cell, 400 for a refusal or a bad body', async () => {
    expect((await post('/control/nginx/fault')).status).toBe(404);
    const cell = await post('/control/gitaly/cell_b/fault', {});
    expect(cell.status).toBe(404);
    expect(cell.body.error).toMatch(/cells: cell_a/);
    const refused = await post('/control/topology-service/refuse', { count: -1 });
    expect(refused).toMatchObject({ status: 400, body: { code: 'CONTROL_REFUSED' } });
    expect(refused.body.error).toMatch(/count must be a positive integer/);
    const bad = await call('/control/topology-service/echo', { method: 'POST', body: '[1]' });
    expect(bad.status).toBe(400);
  });

  it('sends a world op to every process and answers the list', async () => {
    const r = await post('/control/world/clockSkew', { ms: 1000 });
    expect(r.status).toBe(200);
    const names = (r.body.result as Array<{ service: string }>).map((a) => a.service).sort();
    expect(names).toEqual(['gitaly-cell_a', 'mock-cell', 'topology-service']);
  });

  it('resets every target; one without a reset op is left out', async () => {
    const r = await post('/control/reset');
    expect(r.status).toBe(200);
    const got = (r.body.result as Array<{ target: string; cell?: string }>).map(
      (a) => `${a.target}/${a.cell ?? ''}`,
    );
    expect(got.sort()).toEqual([
      'gitaly/cell_a',
      'rails/cell_a',
      'rails/cell_b',
      'world/',
      'world/',
      'world/',
    ]);
  });

  it('journals every control call', async () => {
    await post('/control/topology-service/echo', { n: 7 });
    const r = await call('/journal?service=control&endpoint=/control/topology-service/echo');
    const last = (r.body.entries as JournalEntry[]).at(-1);
    expect(last).toMatchObject({
      service: 'control',
      cell: null,
      method: 'POST',
      status: 200,
      fields: { target: 'topology-service', op: 'echo', args: { n: 7 } },
    });
  });
});

describe('journal', () => {
  it('stores what the children send with seq, filters by cell and since, and writes NDJSON', async () => {
    const before = (await call('/journal')).body.next as number;
    await post('/control/gitaly/cell_a/emit', { count: 3 });
    const all = await call(`/journal?since=${before}&service=gitaly`);
    const entries = all.body.entries as JournalEntry[];
    expect(entries.map((e) => e.endpoint)).toEqual([0, 1, 2].map((i) => `/api/v4/internal/fake/${i}`));
    expect(entries.map((e) => e.seq - before)).toEqual([1, 2, 3]);
    const second = entries[1]?.seq ?? 0;
    const after = await call(`/journal?since=${second}&service=gitaly&cell=cell_a`);
    expect((after.body.entries as JournalEntry[]).map((e) => e.seq)).toEqual([second + 1]);
    expect((await call('/journal?cell=cell_zz')).body.entries).toEqual([]);
    await waitUntil(() => readFileSync(world.journal.file, 'utf8').includes(`"seq":${second + 1},`), 5_000);
    const lines = readFileSync(world.journal.file, 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as JournalEntry).seq)).toEqual(lines.map((_, i) => i + 1));
  });

  it('long-polls until a matching entry arrives', async () => {
    const next = (await call('/journal')).body.next as number;
    const waiting = call(`/journal?since=${next}&service=rails&wait=10000`);
    await new Promise((r) => setTimeout(r, 200));
    await post('/control/rails/cell_a/emit', { count: 1 });
    const r = await waiting;
    expect((r.body.entries as JournalEntry[]).map((e) => e.service)).toEqual(['rails']);
    const empty = await call(`/journal?since=${r.body.next}&service=rails&wait=100`);
    expect(empty.body.entries).toEqual([]);
  });

  it('streams entries as server-sent events', async () => {
    const since = (await call('/journal')).body.next as number;
    const abort = new AbortController();
    const res = await fetch(`${world.contract.control.url}/journal?service=gitaly&since=${since}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    await post('/control/gitaly/cell_a/emit', { count: 2 });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while ((text.match(/^data: /gm) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    abort.abort();
    const data = text.split('\n').filter((l) => l.startsWith('data: '));
    expect(data.map((l) => (JSON.parse(l.slice(6)) as JournalEntry).service)).toEqual(['gitaly', 'gitaly']);
  });
});

describe('unanswered calls', () => {
  it('answer 502 when the process does not answer in time or exits', async () => {
    const child = fork(FAKE, [], { stdio: 'ignore' });
    children.push(child);
    // A router of its own, with a short timeout.
    const { WorldRouter } = await import('./world-router.js');
    const router = new WorldRouter(() => undefined, 300);
    router.attach(spec('topology-service', [{ target: 'topology-service' }]), child);
    await new Promise((r) => child.once('message', r));
    const silent = await router.control('topology-service', undefined, 'silent', {});
    expect(silent).toEqual([expect.objectContaining({ ok: false, unanswered: true })]);
    const exiting = await router.control('topology-service', undefined, 'exit', {});
    expect(exiting[0]?.error).toMatch(/exited|did not answer/);
  });
});
