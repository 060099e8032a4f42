import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey } from '../../lib/jwt.js';
import { gitChildrenOf, isAlive, rssMiB } from '../helpers/procs.js';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';
import { badTokens, median } from './tokens.js';
import { hostPort, type RawConn, rawConnect } from './wire.js';

/**
 * Hostile clients of git over HTTP (bounded loops, loopback only): bad Workhorse tokens at the
 * cell's git HTTP pre-authorization, slowloris on the bridge's git routes, and a body that claims
 * gzip and is not — at the bridge and through the router's HTTP front. After each, the service is
 * alive, within its memory bound, and a real HTTP clone succeeds.
 */
const HEADERS_TIMEOUT_MS = 2_000;
const BODY_TIMEOUT_MS = 5_000;
const PROJECT = 'my-company/my-project';
const ALICE_BASIC = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
const MEMORY_BOUND_MIB = 150;

let stack: RunningStack;
let work: string;
let bridge: string;
let bridgePid: number;

beforeAll(async () => {
  // Short HTTP/1.1 headers and upload-pack body timeouts: the bridge's own timeouts answer here.
  stack = await startStack({
    env: {
      BRIDGE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      BRIDGE_UPLOAD_PACK_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    },
  });
  work = mkdtempSync(join(stack.dataDir, 'adversarial-git-http-'));
  bridge = stack.json.cells.find((c) => c.name === 'cell_eu0')?.bridge as string;
  bridgePid = stack.json.pids['bridge-cell_eu0'] as number;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const httpUrl = (base: string, project: string) =>
  `http://alice:alice-password@${new URL(base).host}/${project}.git`;

let clones = 0;
async function httpClone(base: string, extra: string[] = []) {
  return run('git', [...extra, 'clone', '-q', httpUrl(base, PROJECT), join(work, `c${clones++}`)], {
    env: { ...stack.gitEnv('alice'), GIT_TERMINAL_PROMPT: '0' },
    timeoutMs: 60_000,
  });
}

/** Alive, memory within bounds, and a real HTTP clone straight into the bridge and via the router works. */
async function stillServing(pid: number, rssBefore: number): Promise<void> {
  expect(isAlive(pid)).toBe(true);
  expect((rssMiB(pid) ?? Number.POSITIVE_INFINITY) - rssBefore).toBeLessThan(MEMORY_BOUND_MIB);
  for (const base of [bridge, stack.json.router.http]) {
    const r = await httpClone(base);
    expect(r.code, r.stderr).toBe(0);
  }
}

describe('bad Workhorse JWT at the cell’s git HTTP pre-authorization', () => {
  const routes = [
    ['GET', `/${PROJECT}.git/info/refs?service=git-upload-pack`],
    ['POST', `/${PROJECT}.git/git-upload-pack`],
    ['POST', `/${PROJECT}.git/git-receive-pack`],
  ] as const;

  it('forged, expired, alg none, wrong issuer, wrong key: Rails’ 403, fast, for each git route', async () => {
    const key = jwtKey(readFileSync(stack.json.secrets.workhorse, 'utf8'));
    const rails = stack.json.cells.find((c) => c.name === 'cell_eu0')?.rails as string;
    for (const [kind, token] of Object.entries(badTokens(key, 'gitlab-workhorse'))) {
      // Workhorse's own JWT carries no user: `no gl_id` is a valid one.
      if (kind === 'no gl_id') continue;
      for (const [method, path] of routes) {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          const res = await fetch(`${rails}${path}`, {
            method,
            headers: { authorization: ALICE_BASIC, 'gitlab-workhorse-api-request': token },
          });
          const text = await res.text();
          times.push(performance.now() - started);
          expect(res.status, `${kind} ${path}`).toBe(403);
          expect(text, `${kind} ${path}`).toContain('Signature verification failed');
          expect(res.headers.get('content-type') ?? '', kind).not.toContain('vnd.gitlab-workhorse');
        }
        expect(median(times), `${kind} ${path}`).toBeLessThan(50);
      }
    }
  }, 120_000);

  it('a client’s own Workhorse header is not relayed: the bridge signs its own, the clone works', async () => {
    const forged = badTokens(new TextEncoder().encode('guess'), 'gitlab-workhorse').forged as string;
    const r = await httpClone(bridge, ['-c', `http.extraHeader=Gitlab-Workhorse-Api-Request: ${forged}`]);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
});

const statusLines = (c: RawConn) =>
  c
    .received()
    .toString('latin1')
    .match(/^HTTP\/1\.1 \d{3}/gm) ?? [];

describe('slowloris on the bridge’s git routes', () => {
  it('headers trickled: the bridge’s headers timeout answers 408 and closes; clones meanwhile are served', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const slow = await Promise.all(Array.from({ length: 100 }, () => rawConnect(hostPort(bridge))));
    for (const c of slow)
      await c.write(`GET /${PROJECT}.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: x\r\n`);
    const started = Date.now();
    const cloneDuring = httpClone(bridge);
    for (let round = 0; round < 8 && Date.now() - started < HEADERS_TIMEOUT_MS * 3; round++) {
      for (const c of slow) await c.write(`X-Drip-${round}: y\r\n`);
      await sleep(500);
    }
    const during = await cloneDuring;
    expect(during.code, during.stderr).toBe(0);
    const closed = await Promise.race([
      Promise.all(slow.map((c) => c.closed)).then(() => true),
      sleep(HEADERS_TIMEOUT_MS * 3).then(() => false),
    ]);
    expect(closed).toBe(true);
    for (const c of slow) expect(statusLines(c)).toEqual(['HTTP/1.1 408']);
    for (const c of slow) c.socket.destroy();
    await stillServing(bridgePid, before);
  }, 90_000);

  it('a body trickled into git-upload-pack: bounded, others served, the bridge’s body deadline answers 500 and ends every git', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const gitaly = stack.json.pids['gitaly-cell_eu0'] as number;
    const slow = await Promise.all(Array.from({ length: 50 }, () => rawConnect(hostPort(bridge))));
    for (const c of slow)
      await c.write(
        `POST /${PROJECT}.git/git-upload-pack HTTP/1.1\r\nHost: x\r\nAuthorization: ${ALICE_BASIC}\r\n` +
          'Content-Type: application/x-git-upload-pack-request\r\nTransfer-Encoding: chunked\r\n\r\n' +
          '9\r\n0032want \r\n',
      );
    // The want line's object id, one hex digit per round: the request never completes.
    for (let round = 0; round < 6; round++) {
      for (const c of slow) await c.write('1\r\na\r\n');
      await sleep(500);
    }
    // One git per trickler at most (Gitaly starts git and streams the body to it), nothing answered yet.
    const uploadPacks = () => gitChildrenOf([gitaly]).filter((p) => p.cmdline.includes('upload-pack'));
    expect(uploadPacks().length).toBeLessThanOrEqual(slow.length);
    expect(slow.map((c) => c.received().toString('latin1')).filter((t) => t !== '')).toEqual([]);
    await stillServing(bridgePid, before);
    // The body deadline: each call cancelled, its git ended, Workhorse's 500 while the body still comes.
    const until = Date.now() + BODY_TIMEOUT_MS + 5_000;
    while (Date.now() < until && slow.some((c) => statusLines(c).length === 0)) {
      for (const c of slow) await c.write('1\r\na\r\n');
      await sleep(250);
    }
    for (const c of slow) expect(statusLines(c)).toEqual(['HTTP/1.1 500']);
    for (const c of slow) c.socket.destroy();
    const deadline = Date.now() + 5_000;
    while (uploadPacks().length > 0 && Date.now() < deadline) await sleep(200);
    expect(uploadPacks()).toEqual([]);
  }, 90_000);
});

/** A POST of git-upload-pack whose `Content-Encoding: gzip` body is not gzip: its status, or 0 if the connection broke. */
async function postFakeGzip(base: string): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(`${new URL(base).origin}/${PROJECT}.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        authorization: ALICE_BASIC,
        'content-type': 'application/x-git-upload-pack-request',
        'content-encoding': 'gzip',
      },
      body: Buffer.from('0032want 0000000000000000000000000000000000000000\n00000009done\n'),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text().catch(() => '');
    return { status: res.status, text, ms: performance.now() - started };
  } catch {
    return { status: 0, text: '', ms: performance.now() - started };
  }
}

describe('a body that claims gzip and is not', () => {
  it('at the bridge and through the router’s HTTP front: answered quickly, never a pack, nothing left running', async () => {
    const before = rssMiB(bridgePid) ?? 0;
    const gitaly = stack.json.pids['gitaly-cell_eu0'] as number;
    for (const base of [bridge, stack.json.router.http]) {
      const r = await postFakeGzip(base);
      expect(r.ms, base).toBeLessThan(10_000);
      expect(r.text, base).not.toContain('PACK');
      // Workhorse's gzip reader fails on the header at once: `500`, before any answer.
      expect([r.status, r.text], base).toEqual([500, 'Internal Server Error\n']);
    }
    await sleep(1_000);
    expect(gitChildrenOf([gitaly]).filter((p) => p.cmdline.includes('upload-pack'))).toEqual([]);
    await stillServing(bridgePid, before);
  }, 60_000);
});
