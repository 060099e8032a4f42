/**
 * S20 can fail: behind Cloudflare's edge as it was before production#22944 — an edge file with
 * `bufferSshPackBody: true` — the cell sees an `ssh-upload-pack` request only when its body ended,
 * so the advertisement never comes while git's stdin is open; behind `--edge cloudflare` S20 passes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'edge-buffering-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('S20 through an edge that buffers ssh-*-pack bodies', () => {
  it('FAILS behind the pre-fix edge file and passes behind --edge cloudflare', {
    timeout: 180_000,
  }, async () => {
    const file = join(dir, 'pre-fix.json');
    writeFileSync(
      file,
      JSON.stringify({ version: 1, base: 'cloudflare', bufferSshPackBody: true, timeScale: 0.1 }),
    );
    const buffered = await run('node', [CLI, 'conformance', '--edge', file, '--only', 'S20'], {
      timeoutMs: 90_000,
    });
    expect(buffered.code, buffered.stdout + buffered.stderr).toBe(1);
    expect(buffered.stdout).toMatch(/S20 +FAIL/);
    expect(buffered.stdout).toContain("ssh-upload-pack: no byte of the cell's answer within 5 s");
    const streamed = await run(
      'node',
      [CLI, 'conformance', '--edge', 'cloudflare', '--edge-time-scale', '0.1', '--only', 'S20'],
      { timeoutMs: 90_000 },
    );
    expect(streamed.code, streamed.stdout + streamed.stderr).toBe(0);
    expect(streamed.stdout).toMatch(/S20 +PASS/);
  });
});
