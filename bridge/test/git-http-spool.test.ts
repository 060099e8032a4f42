import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPOOL_MEMORY_BYTES } from '../../lib/gitaly/write-after-read.js';
import { waitForNoGit } from '../../mock-gitaly/test-support/harness.js';
import { GIT_ENV, type Harness, PROJECT, type RunningBridge, startHarness } from '../test-support/harness.js';

/**
 * Workhorse's write-after-read coupling for upload-pack, with the real mock Gitaly behind the
 * bridge: a negotiation whose early answer (one `ACK <oid> common` per `have`) is far larger than
 * the yamux window and the in-memory spool. The answer must start only after the request body has
 * ended, and must not stall Gitaly meanwhile (gitlab-workhorse#92): it is spooled to disk.
 */

const COMMITS = 8_000;
let h: Harness;
let b: RunningBridge;
let commits: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  const bare = h.createRepo(PROJECT);
  // A long first-parent history on main, written in one go.
  const parent = execFileSync('git', ['--git-dir', bare, 'rev-parse', 'main'], { encoding: 'utf8' }).trim();
  const stream: string[] = [];
  for (let i = 1; i <= COMMITS; i++) {
    const msg = `c${i}\n`;
    stream.push(
      `commit refs/heads/main\nmark :${i}\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\n`,
      `data ${msg.length}\n${msg}${i === 1 ? `from ${parent}` : `from :${i - 1}`}\n\n`,
    );
  }
  execFileSync('git', ['--git-dir', bare, 'fast-import', '--quiet'], {
    input: stream.join(''),
    env: GIT_ENV,
  });
  commits = execFileSync('git', ['--git-dir', bare, 'rev-list', 'main'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .trim()
    .split('\n');
  // The smallest yamux window the bridge allows: the answer (~450 KB) is beyond it.
  b = await h.startBridge({ gitalyYamuxWindowBytes: 256 * 1024 });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

interface Timed {
  status: number | undefined;
  body: Buffer;
  bodyEndAt: number;
  firstByteAt: number | undefined;
}

/** POSTs `body` in two parts with a pause between them; times the body's end and the first byte. */
function postInTwoParts(path: string, body: Buffer, pauseMs: number): Promise<Timed> {
  const url = new URL(path, b.url);
  return new Promise((resolve, reject) => {
    let bodyEndAt = Number.POSITIVE_INFINITY;
    let firstByteAt: number | undefined;
    const req = http.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-git-upload-pack-request',
        authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}`,
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        firstByteAt ??= performance.now();
        chunks.push(c);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode, body: Buffer.concat(chunks), bodyEndAt, firstByteAt }),
      );
      res.on('error', reject);
    });
    const cut = Math.floor(body.length * 0.9);
    req.write(body.subarray(0, cut));
    setTimeout(() => {
      bodyEndAt = performance.now();
      req.end(body.subarray(cut));
    }, pauseMs);
  });
}

describe('upload-pack: the answer follows the request body’s end (write-after-read)', () => {
  it('an early answer far beyond the yamux window and the memory spool is held on disk, then sent whole', async () => {
    const tip = commits[0] ?? '';
    const lines = [
      pkt(`want ${tip} multi_ack_detailed side-band-64k ofs-delta agent=spool-test\n`),
      '0000',
      ...commits.map((c) => pkt(`have ${c}\n`)),
      pkt('done\n'),
    ];
    const body = Buffer.from(lines.join(''));
    // Gitaly answers an ACK line per have while the body is still being read.
    const res = await postInTwoParts(`/${PROJECT}.git/git-upload-pack`, body, 1500);
    expect(res.status).toBe(200);
    expect(res.firstByteAt).toBeDefined();
    expect(res.firstByteAt ?? 0).toBeGreaterThanOrEqual(res.bodyEndAt);
    const text = res.body.toString('latin1');
    expect(text.match(/ACK [0-9a-f]{40} common\n/g)?.length).toBe(COMMITS + 1);
    const access = b.logs.lines.find((l) => typeof l.spooled_bytes === 'number');
    expect(access?.spooled_bytes).toBeGreaterThan(4 * SPOOL_MEMORY_BYTES);
    expect(await waitForNoGit(2000)).toEqual([]);
  }, 120_000);
});
