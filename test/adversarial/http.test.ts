import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { postEndlessBodyReadingLate } from '../../lib/test-support/late-reader.js';
import { type GeoNodeKey, signGeoToken } from '../../mock-cell/geo/token.js';
import { geoPaths, geoSiteName } from '../../stack/geo-plan.js';
import { stackPaths } from '../../stack/layout.js';
import { isAlive, rssMiB } from '../helpers/procs.js';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';
import { badGeoTokens, badTokens, h1Status, h2Status, jws, median } from './tokens.js';
import {
  Flag,
  FrameType,
  frame,
  H2_PREFACE,
  hostPort,
  literal,
  rawConnect,
  requestHeaderBlock,
} from './wire.js';

/** The demo's Geo secondary site, of its legacy cell. */
const GEO_CELL = { name: 'cell_us0' };
const GEO_SITE = geoSiteName(GEO_CELL);

/**
 * Hostile HTTP clients (bounded loops, loopback only) against the bridge's HTTP/2 side and the
 * router's HTTP/1.1 front: each is held with bounded memory, the service stays up, and a real
 * clone through the stack succeeds right after.
 */
let stack: RunningStack;
let work: string;
let bridge: string;
let bridgePid: number;
const GEO_PROJECT = 'gitlab-org/gitlab-test';
const cellBridge = (name: string) => stack.json.cells.find((c) => c.name === name)?.bridge as string;
/** The secondary site's node key, as the primary's Rails knows it (stack/geo-plan.ts). */
const geoNode = (): GeoNodeKey => ({
  site: GEO_SITE,
  accessKey: `${GEO_SITE}-access-key`,
  secret: jwtKey(readSecretFile(geoPaths(stackPaths(stack.dataDir), GEO_CELL).secondarySecret)),
});
const MEMORY_BOUND_MIB = 150;

beforeAll(async () => {
  stack = await startStack();
  work = mkdtempSync(join(tmpdir(), 'adversarial-http-'));
  const cell = stack.json.cells.find((c) => c.name === 'cell_eu0');
  bridge = cell?.bridge as string;
  bridgePid = stack.json.pids['bridge-cell_eu0'] as number;
});
afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

let clones = 0;
/** The service survived: alive, memory within bounds, and a real clone through the router works. */
async function stillServing(pid: number, rssBefore: number): Promise<void> {
  expect(isAlive(pid)).toBe(true);
  expect((rssMiB(pid) ?? Number.POSITIVE_INFINITY) - rssBefore).toBeLessThan(MEMORY_BOUND_MIB);
  const r = await run(
    'git',
    ['clone', '-q', stack.url('my-company/my-project'), join(work, `c${clones++}`)],
    {
      env: stack.gitEnv('alice'),
      timeoutMs: 60_000,
    },
  );
  expect(r.code, r.stderr).toBe(0);
}

describe('HTTP/2 on the bridge', () => {
  it('rapid reset (CVE-2023-44487): 5 000 streams opened and cancelled at once', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    let opened = 0;
    const deadline = Date.now() + 8_000;
    while (opened < 5_000 && Date.now() < deadline) {
      const session = http2.connect(bridge);
      session.on('error', () => undefined);
      for (let i = 0; i < 500 && !session.destroyed && !session.closed; i++, opened++) {
        const req = session.request({
          ':method': 'POST',
          ':path': '/my-company/my-project.git/ssh-upload-pack',
        });
        req.on('error', () => undefined);
        req.close(http2.constants.NGHTTP2_CANCEL);
      }
      await sleep(10);
      session.destroy();
    }
    expect(opened).toBeGreaterThan(1_000);
    await stillServing(bridgePid, before);
  }, 90_000);

  it('a SETTINGS flood from a client that never reads the ACKs', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const conn = await rawConnect(hostPort(bridge), { read: false });
    await conn.write(Buffer.concat([H2_PREFACE, frame(FrameType.settings, 0, 0)]));
    const settings = Buffer.concat(Array.from({ length: 1_000 }, () => frame(FrameType.settings, 0, 0)));
    let sent = 0;
    for (; sent < 100 && (await conn.write(settings)); sent++) if (sent % 10 === 0) await sleep(1);
    conn.socket.destroy();
    await stillServing(bridgePid, before);
  }, 60_000);

  it('a client that never reads (window exhausted) with 200 requests open', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const conn = await rawConnect(hostPort(bridge), { read: false });
    // INITIAL_WINDOW_SIZE 0: the bridge may send headers but not one byte of any body.
    const zeroWindow = Buffer.from([0x00, 0x04, 0, 0, 0, 0]);
    await conn.write(Buffer.concat([H2_PREFACE, frame(FrameType.settings, 0, 0, zeroWindow)]));
    const block = requestHeaderBlock(hostPort(bridge));
    for (let id = 1; id < 400; id += 2) {
      if (!(await conn.write(frame(FrameType.headers, Flag.endHeaders | Flag.endStream, id, block)))) break;
    }
    await sleep(2_000);
    await stillServing(bridgePid, before);
    conn.socket.destroy();
  }, 60_000);

  it('a header block over the limit is refused, the session or stream reset, nothing served', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const session = http2.connect(bridge, {
      maxSendHeaderBlockLength: 1 << 20,
    } as http2.ClientSessionOptions);
    session.on('error', () => undefined);
    const status = await new Promise<string>((resolve) => {
      const req = session.request({ ':path': '/', 'x-big': 'a'.repeat(256 * 1024) });
      req.on('response', (h) => resolve(String(h[':status'])));
      req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.on('close', () => resolve('closed'));
      req.end();
    });
    session.destroy();
    expect(status).not.toMatch(/^2/);
    await stillServing(bridgePid, before);
  }, 60_000);

  it('a CONTINUATION flood (a header block that never ends) is cut off', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const conn = await rawConnect(hostPort(bridge), { read: false });
    await conn.write(Buffer.concat([H2_PREFACE, frame(FrameType.settings, 0, 0)]));
    await conn.write(frame(FrameType.headers, 0, 1, requestHeaderBlock(hostPort(bridge))));
    const piece = Buffer.concat(
      Array.from({ length: 120 }, (_, i) => literal(`x-flood-${i}`, 'v'.repeat(100))),
    );
    let sentMiB = 0;
    const deadline = Date.now() + 10_000;
    while (
      sentMiB < 64 &&
      Date.now() < deadline &&
      (await conn.write(frame(FrameType.continuation, 0, 1, piece)))
    ) {
      sentMiB += piece.length / (1 << 20);
    }
    conn.socket.destroy();
    // The bridge stopped taking the block long before 64 MiB (or held it without growing).
    await stillServing(bridgePid, before);
  }, 60_000);
});

/** One raw HTTP/1.1 exchange: what came back until the server closed or `ms` passed. */
async function rawH1(
  address: string,
  request: string,
  ms = 5_000,
): Promise<{ text: string; closed: boolean }> {
  const conn = await rawConnect(address);
  await conn.write(request);
  const closed = await Promise.race([conn.closed.then(() => true), sleep(ms).then(() => false)]);
  conn.socket.destroy();
  return { text: conn.received().toString('latin1'), closed };
}

const statusLines = (text: string) => text.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];

describe('HTTP/1.1 on the router front', () => {
  const front = () => stack.json.router.http.replace(/^http:\/\//, '');
  const routerPid = () => stack.json.pids.router as number;

  it('slowloris: 150 connections dripping their headers; a request and a clone meanwhile are served', async () => {
    const before = rssMiB(routerPid()) ?? 0;
    const slow = await Promise.all(Array.from({ length: 150 }, () => rawConnect(front())));
    for (const c of slow) await c.write('GET / HTTP/1.1\r\nHost: x\r\n');
    for (let round = 0; round < 6; round++) {
      for (const c of slow) await c.write(`X-Drip-${round}: y\r\n`);
      await sleep(500);
    }
    const r = await fetch(`${stack.json.router.http}/my-company/my-project`, { redirect: 'manual' });
    expect(r.status).toBeLessThan(500);
    await stillServing(routerPid(), before);
    for (const c of slow) c.socket.destroy();
  }, 60_000);

  it('a refused request with a body that never ends is answered at once and its connection closed', async () => {
    const conn = await rawConnect(front());
    const started = Date.now();
    await conn.write(
      'POST /api/v4/internal/allowed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    let answeredAt: number | undefined;
    const chunk = `4000\r\n${'z'.repeat(0x4000)}\r\n`;
    while (Date.now() - started < 5_000 && (await conn.write(chunk))) {
      if (answeredAt === undefined && /^HTTP\/1\.1 404/.test(conn.received().toString('latin1')))
        answeredAt = Date.now();
      await sleep(5);
    }
    const closed = await Promise.race([conn.closed.then(() => true), sleep(5_000).then(() => false)]);
    conn.socket.destroy();
    expect(statusLines(conn.received().toString('latin1'))).toEqual(['HTTP/1.1 404']);
    expect((answeredAt ?? Date.now()) - started).toBeLessThan(1_000);
    expect(closed).toBe(true);
  }, 30_000);

  it('a refusal read late by a client still sending its body arrives whole (router front and bridge)', async () => {
    // Without a lingering close the kernel's reset of the close destroys the answer before it is read.
    const routerFront = new URL(stack.json.router.http);
    const atRouter = await postEndlessBodyReadingLate(Number(routerFront.port), {
      path: '/api/v4/internal/allowed',
    });
    expect(statusLines(atRouter)).toEqual(['HTTP/1.1 404']);
    const cell = new URL(bridge);
    const atBridge = await postEndlessBodyReadingLate(Number(cell.port), {
      path: '/my-company/my-project.git/ssh-upload-pack',
    });
    expect(statusLines(atBridge)).toEqual(['HTTP/1.1 404']);
  }, 30_000);

  it('request smuggling attempts get one 400 and a closed connection, never a second request', async () => {
    const smuggled = 'GET /api/v4/internal/allowed HTTP/1.1\r\nHost: x\r\n\r\n';
    const attempts = [
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${4 + smuggled.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n${smuggled}`,
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${smuggled}`,
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    ];
    for (const request of attempts) {
      const { text, closed } = await rawH1(front(), request);
      expect(statusLines(text), request).toEqual(['HTTP/1.1 400']);
      expect(closed, request).toBe(true);
    }
  }, 60_000);
});

describe('tokens', () => {
  it('every bad shell token is refused by the bridge on HTTP/1.1 and HTTP/2 in < 50 ms, body unread', async () => {
    const key = jwtKey(readFileSync(stack.json.secrets.shell, 'utf8'));
    const path = '/my-company/my-project.git/ssh-upload-pack';
    for (const [kind, token] of Object.entries(badTokens(key, 'gitlab-shell'))) {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        for (const ask of [
          () => h1Status(hostPort(bridge), path, { 'gitlab-shell-api-request': token }),
          () => h2Status(bridge, path, { 'gitlab-shell-api-request': token }),
        ]) {
          const { status, ms } = await ask();
          // bridge/README.md: an invalid shell token is answered `404 Not found`, before any body is read.
          expect(status, kind).toBe(404);
          times.push(ms);
        }
      }
      expect(median(times), kind).toBeLessThan(50);
    }
  }, 120_000);

  it('every bad Workhorse token is refused by the cell’s Rails in < 50 ms', async () => {
    const key = jwtKey(readFileSync(stack.json.secrets.workhorse, 'utf8'));
    const rails = hostPort(stack.json.cells.find((c) => c.name === 'cell_eu0')?.rails as string);
    for (const [kind, token] of Object.entries(badTokens(key, 'gitlab-workhorse'))) {
      if (kind === 'no gl_id') continue;
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const { status, ms } = await h1Status(rails, '/my-company/my-project.git/ssh-upload-pack', {
          'gitlab-workhorse-api-request': token,
        });
        expect(status, kind).toBe(403);
        times.push(ms);
      }
      expect(median(times), kind).toBeLessThan(50);
    }
  }, 120_000);

  it('every bad GL-Geo token is refused through the primary’s bridge on HTTP/1.1 and HTTP/2 in < 50 ms, body unread', async () => {
    const node = geoNode();
    const bridgeUs0 = cellBridge('cell_us0');
    const tokens = await badGeoTokens(node, GEO_PROJECT, 'gitlab-org/gitlab');
    for (const [kind, bad] of Object.entries(tokens)) {
      const times: number[] = [];
      for (const service of ['ssh-upload-pack', 'ssh-receive-pack']) {
        const path = `/${GEO_PROJECT}.git/${service}`;
        for (let i = 0; i < 3; i++) {
          for (const ask of [
            () => h1Status(hostPort(bridgeUs0), path, { authorization: bad.authorization }),
            () => h2Status(bridgeUs0, path, { authorization: bad.authorization }),
          ]) {
            // mock-cell/README.md "GL-Geo pre-authorization": Rails' text, passed back by the bridge.
            const { status, ms, text } = await ask();
            expect(status, `${kind} ${service}`).toBe(bad.status);
            expect(text, `${kind} ${service}`).toContain(bad.text);
            times.push(ms);
          }
        }
      }
      expect(median(times), kind).toBeLessThan(50);
    }
  }, 120_000);

  it('a valid GL-Geo token is refused where it does not belong: another cell, a push as the node itself', async () => {
    const node = geoNode();
    const now = Math.floor(Date.now() / 1000);
    // cell_eu0 is no Geo site: no node's key is known there.
    const elsewhere = await signGeoToken(node, { scope: 'my-company/my-project', gl_id: 'user-2' }, now);
    const eu0 = cellBridge('cell_eu0');
    const path = '/my-company/my-project.git/ssh-upload-pack';
    for (const r of [
      await h1Status(hostPort(eu0), path, { authorization: elsewhere }),
      await h2Status(eu0, path, { authorization: elsewhere }),
    ]) {
      expect(r.status).toBe(401);
      expect(r.text).toContain('Geo JWT authentication failed: Bad token');
      expect(r.ms).toBeLessThan(1_000);
    }
    // The node's own token (no gl_id) may fetch for replication, never push.
    const own = await signGeoToken(node, { scope: GEO_PROJECT }, now);
    const us0 = cellBridge('cell_us0');
    const push = `/${GEO_PROJECT}.git/ssh-receive-pack`;
    for (const r of [
      await h1Status(hostPort(us0), push, { authorization: own }),
      await h2Status(us0, push, { authorization: own }),
    ]) {
      expect(r.status).toBe(403);
    }
  }, 60_000);

  it('a valid shell token replayed for a project its user may not read is refused', async () => {
    const key = jwtKey(readFileSync(stack.json.secrets.shell, 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    const token = jws(
      { alg: 'HS256', typ: 'JWT' },
      { iss: 'gitlab-shell', iat: now, exp: now + 60, gl_id: 'user-2' },
      key,
    );
    const path = '/my-company/my-other-project.git/ssh-upload-pack';
    for (const { status } of [
      await h1Status(hostPort(bridge), path, { 'gitlab-shell-api-request': token }),
      await h2Status(bridge, path, { 'gitlab-shell-api-request': token }),
    ]) {
      expect([403, 404]).toContain(status);
    }
  }, 60_000);
});
