import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRepo,
  GIT_ENV,
  git,
  type Harness,
  type RunningBridge,
  startHarness,
} from '../test-support/harness.js';

const HELPER = fileURLToPath(new URL('../test-support/git-ssh-tunnel.mjs', import.meta.url));

let h: Harness;
let b: RunningBridge;
beforeAll(async () => {
  h = await startHarness();
  b = await h.startBridge();
  createRepo(h.storage, 'group/project.git');
});
afterAll(async () => {
  await h?.close();
});

/** Runs real git with the tunnel helper as its ssh. */
async function gitThroughBridge(
  args: string[],
  opts: { protocol: 'h1' | 'h2'; framed?: boolean; cwd?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...GIT_ENV,
    GIT_SSH_COMMAND: `${process.execPath} ${HELPER}`,
    BRIDGE_TUNNEL_URL: b.url,
    BRIDGE_TUNNEL_TOKEN: await h.token(),
    BRIDGE_TUNNEL_PROTOCOL: opts.protocol,
    BRIDGE_TUNNEL_FRAMED: opts.framed ? '1' : '0',
  };
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-c', 'ssh.variant=ssh', '-c', 'protocol.version=2', ...args],
      { env, cwd: opts.cwd ?? h.dir, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const REMOTE = 'ssh://git@bridge.test/group/project.git';

describe.each([
  { protocol: 'h1', framed: false },
  { protocol: 'h2', framed: true },
] as const)('real git over $protocol (framed: $framed)', ({ protocol, framed }) => {
  it('clones, pushes and fetches the pushed commit back', async () => {
    const dest = mkdtempSync(join(h.dir, `clone-${protocol}-`));
    const clone = await gitThroughBridge(['clone', REMOTE, dest], { protocol, framed });
    expect(clone.stderr).not.toContain('fatal');
    expect(clone.code).toBe(0);
    expect(readFileSync(join(dest, 'README.md'), 'utf8')).toBe('# hello through the bridge\n');

    writeFileSync(join(dest, `${protocol}.txt`), `pushed over ${protocol}\n`);
    git(['add', '.'], dest);
    git(['commit', '--quiet', '-m', `push over ${protocol}`], dest);
    const push = await gitThroughBridge(['push', 'origin', 'main'], { protocol, framed, cwd: dest });
    expect(push.code).toBe(0);
    const pushed = git(['rev-parse', 'HEAD'], dest).trim();
    expect(git(['--git-dir', join(h.storage, 'group/project.git'), 'rev-parse', 'main']).trim()).toBe(pushed);

    const again = mkdtempSync(join(h.dir, `again-${protocol}-`));
    const clone2 = await gitThroughBridge(['clone', REMOTE, again], { protocol, framed });
    expect(clone2.code).toBe(0);
    expect(readFileSync(join(again, `${protocol}.txt`), 'utf8')).toBe(`pushed over ${protocol}\n`);
  });

  it('serves git archive --remote', async () => {
    const r = await gitThroughBridge(['archive', `--remote=${REMOTE}`, '--format=tar', 'HEAD', 'README.md'], {
      protocol,
      framed,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('# hello through the bridge');
  });
});
