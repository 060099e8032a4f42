import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import { SHELL_SECRET, WORKHORSE_SECRET } from '../../mock-cell/test-support/fixtures.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import { type EndlessGitaly, startEndlessGitaly } from '../test-support/endless-gitaly.js';
import { type FakeRails, startFakeRails } from '../test-support/fake-rails.js';
import { writeSecret } from '../test-support/harness.js';
import { openTunnel, type Protocol } from '../test-support/tunnel-client.js';

/**
 * A client that reads a little of a 1 GiB response and then stops reading. The bridge runs as its
 * own process, so its VmRSS is its memory alone; the Gitaly side is the endless double, which counts
 * what it managed to send. The bound is generous on purpose (a loaded 2-core machine); the benchmark
 * carries the precise figure.
 */

const MIB = 1024 * 1024;
const RSS_GROWTH_BOUND = 200 * MIB;
const STALL_MS = 3000;

let dir: string;
let programs: CompiledPrograms;
let endless: EndlessGitaly;
let rails: FakeRails;
let bridge: ChildProcess;
let bridgeUrl: string;

/** Resident set size of a process, from /proc (bytes). */
function rss(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-memory-'));
  programs = await compilePrograms(['bridge/main.ts']);
  endless = await startEndlessGitaly();
  rails = await startFakeRails({
    shellKey: jwtKey(SHELL_SECRET),
    workhorseKey: jwtKey(WORKHORSE_SECRET),
    gitalyAddress: endless.address,
    gitalyToken: 'unused',
  });
  const config = join(dir, 'bridge.json');
  writeFileSync(
    config,
    JSON.stringify({
      listen: '127.0.0.1:0',
      railsUrl: rails.url,
      shellSecretFile: writeSecret(dir, 'shell_secret', SHELL_SECRET),
      workhorseSecretFile: writeSecret(dir, 'workhorse_secret', WORKHORSE_SECRET),
      logLevel: 'info',
      shutdownGraceMs: 500,
    }),
  );
  bridge = spawn(process.execPath, [programs.path('bridge/main.ts'), '--config', config], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  bridgeUrl = await new Promise<string>((resolve, reject) => {
    bridge.once('exit', (code) => reject(new Error(`bridge exited with ${code} before listening`)));
    createInterface({ input: bridge.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; listen?: string };
      if (entry.msg === 'listening' && entry.listen) resolve(entry.listen);
    });
  });
});

afterAll(async () => {
  if (bridge?.exitCode === null) {
    const exited = new Promise((resolve) => bridge.once('exit', resolve));
    bridge.kill('SIGTERM');
    await exited;
  }
  await rails?.close();
  await endless?.close();
  programs?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function flood(protocol: Protocol, id: string) {
  return openTunnel(protocol, bridgeUrl, `/flood/${protocol}.git/ssh-upload-pack`, {
    'gitlab-shell-api-request': await signShellJwt(jwtKey(SHELL_SECRET), 'user-2'),
    'x-request-id': id,
  });
}

describe.each(['h1', 'h2'] as const)('a stalled reader over %s', (protocol) => {
  it("keeps the bridge process's RSS bounded while Gitaly is throttled", async ({ annotate }) => {
    const pid = bridge.pid as number;
    // Warm-up: the first tunnel of a protocol allocates the Gitaly channel, parsers, buffers.
    const warm = await flood(protocol, `warm-${protocol}`);
    await warm.waitFor((buf) => buf.length >= 4 * MIB, 20_000);
    warm.abort();
    await endless.call(`warm-${protocol}`)?.cancelled;
    const baseline = rss(pid);

    const id = `stalled-${protocol}`;
    const t = await flood(protocol, id);
    await t.waitFor((buf) => buf.length >= MIB, 20_000);
    t.pause();
    const call = endless.call(id);
    expect(call).toBeDefined();
    let peak = baseline;
    let sentAfter1s = 0;
    const started = Date.now();
    while (Date.now() - started < STALL_MS) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, rss(pid));
      if (sentAfter1s === 0 && Date.now() - started >= 1000) sentAfter1s = call?.sent ?? 0;
    }
    const sent = call?.sent ?? 0;
    const received = t.received().length;
    await annotate(
      `${protocol}: baseline RSS ${(baseline / MIB).toFixed(1)} MiB, peak ${(peak / MIB).toFixed(1)} MiB ` +
        `(+${((peak - baseline) / MIB).toFixed(1)} MiB); Gitaly sent ${(sent / MIB).toFixed(1)} MiB, ` +
        `client read ${(received / MIB).toFixed(1)} MiB`,
    );
    // Throttled: Gitaly stopped (nothing more sent during the last 2 s) far short of 1 GiB.
    expect(sent).toBe(sentAfter1s);
    expect(sent).toBeLessThan(64 * MIB);
    expect(peak - baseline).toBeLessThan(RSS_GROWTH_BOUND);

    t.abort();
    await call?.cancelled;
  });
});
