/**
 * The rollouts' push history through a real edge (reference-cell.md §1.5, S13): behind the
 * `cloudflare` edge at time scale 0.1 (idle connection 1.5 s), a push whose pre-push hook sleeps 3 s
 * FAILS with gitlab-shell 14.56's one-request push (the edge closes the idle tunnel while the hook
 * runs) and succeeds with 14.57.4's two requests (request 2 opens on the client's first byte).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../../fixture/index.js';
import { run } from '../../test/helpers/run.js';

const TOPOLOGY = join(import.meta.dirname, 'world.json');
const scratch = mkdtempSync(join(tmpdir(), 'edge-push-hook-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function pushWithSlowHook(world: World, name: string) {
  const dir = join(scratch, name);
  const env = world.gitEnv('wren');
  const clone = await run('git', ['clone', world.sshUrl('north-group/north-project', 'topology'), dir], {
    env,
  });
  expect(clone.code, clone.stderr).toBe(0);
  const hook = join(dir, '.git', 'hooks', 'pre-push');
  writeFileSync(hook, '#!/bin/sh\nsleep 3\n');
  chmodSync(hook, 0o755);
  const git = (...args: string[]) => run('git', ['-C', dir, ...args], { env, timeoutMs: 60_000 });
  await git('-c', 'user.name=w', '-c', 'user.email=w@x', 'commit', '--allow-empty', '-m', name);
  return git('push', 'origin', 'HEAD');
}

describe.each([
  ['gitlab-shell-14.56', false],
  ['gitlab-shell-14.57.4', true],
] as const)('a push with a 3 s pre-push hook behind cloudflare ×0.1, profile %s', (profile, passes) => {
  let world: World;
  afterAll(async () => {
    await world?.stop();
  });

  it(passes ? 'succeeds' : 'fails: the edge closed the idle tunnel', { timeout: 180_000 }, async () => {
    world = await startWorld({
      topology: TOPOLOGY,
      edge: 'cloudflare',
      edgeTimeScale: 0.1,
      tunnelProfile: profile,
    });
    expect(world.stackJson.edge.figures?.idleTimeoutMs).toBe(1500);
    const push = await pushWithSlowHook(world, profile);
    if (passes) expect(push.code, push.stderr).toBe(0);
    else {
      expect(push.code).not.toBe(0);
      expect(push.stderr).toContain('Remote repository is unavailable');
    }
  });
});
