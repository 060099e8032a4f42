// biome-ignore-all lint/suspicious/noTemplateCurlyInString: rules interpolate ${group} in plain strings by design
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRoutableToken } from '../../lib/routable-token.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * The HTTP front's decisions with fake cells: rules first (400 for a malformed token), then the
 * learned route (`routable` wins), then the rule's cell for `fallback` paths, else the legacy cell.
 */
let stack: TestStack;

const SESSION = (cellId: number) => `_gitlab_session=cell-${cellId}-${'0123456789abcdef'.repeat(2)}`;
const pat = (c: number) => encodeRoutableToken('glpat-', { c, o: 1, u: 2 });
const runnerToken = (c: number) => encodeRoutableToken('glrt-', { c, o: 1, p: 7, u: 2, t: 3 });

function learns(): number {
  return [...stack.cells.values()].reduce((n, c) => n + c.seen('/api/v4/internal/cells/learn').length, 0);
}

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${stack.addresses.http.port}${path}`, { headers });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, body };
}

beforeAll(async () => {
  stack = await startTestStack();
  await stack.addProject('owned/proj', 'cell_eu1');
});

afterAll(async () => {
  await stack?.close();
});

describe('rules and learned routes', () => {
  it('lets a routable path win over a token naming another cell', async () => {
    const res = await get('/owned/proj', { 'private-token': pat(2) });
    expect(res.body).toMatchObject({ cell: 'cell_eu1', ruleAction: null, ruleType: null });
  });

  it.each([
    ['a PAT in Private-Token', { 'private-token': pat(2) }, 'cell_us1'],
    ['a PAT as Bearer', { authorization: `Bearer ${pat(3)}` }, 'cell_eu0'],
    ['a runner token', { 'runner-token': runnerToken(4) }, 'cell_eu1'],
  ])(
    'sends a path the cells do not decide to the cell of %s, with the rule headers',
    async (_n, headers, cell) => {
      const routed = stack.router.metrics.httpRuleRouted;
      const res = await get('/api/v4/user', headers);
      expect(res.body).toMatchObject({ cell, ruleAction: 'classify', ruleType: 'CellId' });
      expect(stack.router.metrics.httpRuleRouted).toBe(routed + 1);
    },
  );

  it('routes by the session cookie prefix', async () => {
    const res = await get('/dashboard', { cookie: `theme=dark; ${SESSION(4)}` });
    expect(res.body).toMatchObject({ cell: 'cell_eu1', ruleAction: 'classify', ruleType: 'SessionPrefix' });
  });

  it('sends a token naming an unknown cell, and plain requests, to the legacy cell without rule headers', async () => {
    expect((await get('/api/v4/user', { 'private-token': pat(9) })).body).toMatchObject({
      cell: 'cell_us0',
      ruleAction: null,
    });
    expect((await get('/api/v4/user')).body).toMatchObject({ cell: 'cell_us0', ruleAction: null });
  });

  it('drops rule headers a client sends itself', async () => {
    const res = await get('/explore', {
      'x-gitlab-http-router-rule-action': 'classify',
      'X-GitLab-HTTP-Router-Rule-Type': 'CellId',
    });
    expect(res.body).toMatchObject({ cell: 'cell_us0', ruleAction: null, ruleType: null });
  });

  it('forwards end-to-end headers only: hop-by-hop ones and those the Connection header names stay behind', async () => {
    const cell = stack.cell('cell_us0');
    const before = cell.seen('/explore').length;
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: stack.addresses.http.port,
          path: '/explore',
          headers: {
            connection: 'close, x-hop',
            'x-hop': 'for this hop',
            'keep-alive': 'timeout=5',
            'x-end': 'kept',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    const seen = cell.seen('/explore')[before];
    expect(seen?.headers['x-end']).toBe('kept');
    expect(seen?.headers['x-hop']).toBeUndefined();
    expect(seen?.headers['keep-alive']).toBeUndefined();
    // The client's Connection header stays behind; the router's own HTTP/1.1 hop says close.
    expect(seen?.headers.connection).toBe('close');
  });

  it('answers 400 for a malformed routable token before learning or proxying', async () => {
    // Right shape for the rules, but not decodable: a length byte claiming more routing bytes than
    // the payload has, and a non-canonical base64 ending.
    const lengthByte = Buffer.concat([Buffer.alloc(16), Buffer.from('c:2'), Buffer.from([0x60])]);
    const malformed = [
      `glpat-${lengthByte.toString('base64url')}.01.0r0000000`,
      `glpat-${'A'.repeat(26)}_.01.0r0000000`,
    ];
    const before = learns();
    const seen = [...stack.cells.values()].reduce((n, c) => n + c.requests.length, 0);
    for (const value of malformed) {
      const res = await get('/owned/proj', { 'private-token': value });
      expect(res.status).toBe(400);
      expect(String(res.body.message)).toMatch(/^400 Bad Request: malformed routable token: /);
      expect(String(res.body.message)).not.toContain(value);
    }
    expect(learns()).toBe(before);
    expect([...stack.cells.values()].reduce((n, c) => n + c.requests.length, 0)).toBe(seen);
    expect(stack.router.metrics.httpRuleRejected).toBeGreaterThanOrEqual(2);
  });

  it('keeps the source of a cached fallback route, so rules still decide for it', async () => {
    stack.world.learnHook = (pathInfo) =>
      pathInfo.startsWith('/unclaimed')
        ? { path: '/unclaimed', cell: 'cell_us0', source: 'fallback', cache_ttl: 60 }
        : undefined;
    try {
      const before = learns();
      expect((await get('/unclaimed/a', { cookie: SESSION(3) })).body).toMatchObject({ cell: 'cell_eu0' });
      expect((await get('/unclaimed/b')).body).toMatchObject({ cell: 'cell_us0' });
      expect((await get('/unclaimed/c', { cookie: SESSION(4) })).body).toMatchObject({ cell: 'cell_eu1' });
      expect(learns()).toBe(before + 1);
    } finally {
      stack.world.learnHook = undefined;
    }
  });

  it('uses the rule when learning fails, else the legacy cell', async () => {
    stack.world.learnFails = true;
    try {
      const fallbacks = stack.router.metrics.fallbacks;
      expect((await get('/fresh-ns/p', { cookie: SESSION(3) })).body).toMatchObject({
        cell: 'cell_eu0',
        ruleType: 'SessionPrefix',
      });
      const plain = await get('/somewhere');
      expect(plain.body).toMatchObject({ cell: 'cell_us0' });
      expect(stack.router.metrics.fallbacks).toBe(fallbacks + 2);
    } finally {
      stack.world.learnFails = false;
    }
  });
});

describe('public side', () => {
  it.each([
    '/api/v4/internal/allowed',
    '/api/v4/internal',
    '//api/v4//internal/authorized_keys?key=x',
    '/api/v4/./internal/discover',
    '/api/v4/x/../internal/check',
    '/api/v4/%69nternal/check',
    '/api%2Fv4%2Finternal/check',
    '/API/V4/Internal/check',
    '/api/v4/internal.json',
    '/api/v4/internal;a=b/check',
  ])('answers 404 for the internal API (%s) without asking a cell', async (path) => {
    const seen = [...stack.cells.values()].reduce((n, c) => n + c.requests.length, 0);
    const blocked = stack.router.metrics.httpInternalBlocked;
    const res = await get(path);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: '404 Not Found' });
    expect([...stack.cells.values()].reduce((n, c) => n + c.requests.length, 0)).toBe(seen);
    expect(stack.router.metrics.httpInternalBlocked).toBe(blocked + 1);
  });

  it('answers a refused request with a body that never ends at once, then closes its connection', async () => {
    const socket = net.connect(stack.addresses.http.port, '127.0.0.1');
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // The client reads only after 300 ms of sending: a close that turns into a reset (the body still
    // arriving) would destroy the answer before it is read; the front closes lingering instead.
    socket.pause();
    socket.write('POST /api/v4/internal/allowed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    const timer = setInterval(() => socket.writable && socket.write(`400\r\n${'z'.repeat(0x400)}\r\n`), 5);
    await sleep(300);
    socket.resume();
    const outcome = await Promise.race([closed.then(() => 'closed'), sleep(5_000).then(() => 'still open')]);
    clearInterval(timer);
    socket.destroy();
    expect(outcome).toBe('closed');
    expect(received).toMatch(/^HTTP\/1\.1 404 /);
    expect(received.toLowerCase()).toContain('connection: close');
  });

  it('answers 400 for a path that cannot be percent-decoded', async () => {
    expect((await get('/owned/%zz')).status).toBe(400);
  });

  it('still proxies paths that only look like the internal API', async () => {
    for (const path of ['/api/v4/internals', '/api/v3/internal/check', '/internal/api/v4']) {
      expect((await get(path)).body).toMatchObject({ cell: 'cell_us0', path });
    }
  });
});

describe('configured rules and the 404 delay', () => {
  let other: TestStack;

  beforeAll(async () => {
    const rulesFile = join(stack.dir, 'rules.json');
    writeFileSync(
      rulesFile,
      JSON.stringify([
        {
          id: 'target_header',
          match: { type: 'header', name: 'x-target-cell', regexValue: '^(?<id>[0-9]+)$' },
          action: 'classify',
          classify: { type: 'CELL_ID', value: '${id}' },
        },
        {
          id: 'first_cell_paths',
          match: { type: 'path', regexValue: '^/first(?:/|$)' },
          action: 'classify',
          classify: { type: 'FIRST_CELL' },
        },
        { id: 'everything_else', action: 'proxy' },
      ]),
    );
    other = await startTestStack({ rulesFile, notFoundDelayMs: [800, 800] });
  });

  afterAll(async () => {
    await other?.close();
  });

  async function otherGet(path: string, headers: Record<string, string> = {}) {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${other.addresses.http.port}${path}`, { headers });
    const body = (await res.json()) as Record<string, unknown>;
    return { status: res.status, body, ms: performance.now() - started };
  }

  it('follows the rules of rulesFile instead of the default ones', async () => {
    expect((await otherGet('/x', { 'x-target-cell': '2' })).body).toMatchObject({
      cell: 'cell_us1',
      ruleAction: 'classify',
      ruleType: 'CellId',
    });
    expect((await otherGet('/first/page')).body).toMatchObject({
      cell: 'cell_us0',
      ruleAction: 'classify',
      ruleType: 'FirstCell',
    });
    // The default session rule is not part of this ruleset: the catch-all proxy rule applies.
    expect((await otherGet('/y', { cookie: SESSION(3) })).body).toMatchObject({
      cell: 'cell_us0',
      ruleAction: 'proxy',
      ruleType: null,
    });
  });

  it('holds 404 answers from cells for the configured time, and nothing else', async () => {
    other.world.notFoundPages.add('/missing');
    const missing = await otherGet('/missing');
    expect(missing.status).toBe(404);
    expect(missing.ms).toBeGreaterThanOrEqual(790);
    const found = await otherGet('/present');
    expect(found.status).toBe(200);
    expect(found.ms).toBeLessThan(790);
    // The router's own 404 (internal API) is not a cell's answer and is not held.
    expect((await otherGet('/api/v4/internal/check')).ms).toBeLessThan(790);
  });
});
