/**
 * A world started with a gitlab-shell release profile (`startWorld({ tunnelProfile })`): stack.json
 * names it for each router, and the bridge's journal shows the shape the router emitted — a protocol
 * v0 clone's upload-pack body as the client sent it (14.56: no flush after `done`), against the
 * default 14.57.6's body closed after `done` with a flush-pkt added (`stdin_tail`).
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KIT_TOPOLOGY, KIT_USER, ROUTED } from '../../conformance/world-plan.js';
import { startWorld, type World } from '../../fixture/index.js';
import type { TunnelProfileName } from '../../lib/contracts/tunnel-profile.js';
import { run } from '../helpers/run.js';

const worlds: World[] = [];
const dir = mkdtempSync(join(tmpdir(), 'profiles-test-'));

afterAll(async () => {
  await Promise.all(worlds.map((w) => w.stop()));
  await rm(dir, { recursive: true, force: true });
});

async function v0Clone(world: World) {
  const since = (await world.client.targets()).lastSeq;
  const r = await run(
    'git',
    [
      '-c',
      'protocol.version=0',
      'clone',
      '--quiet',
      world.sshUrl(ROUTED.project, 'topology'),
      join(dir, `c${world.pid}-${since}`),
    ],
    { env: world.gitEnv(KIT_USER) },
  );
  expect(r.code, r.stderr).toBe(0);
  const entries = await world.journalUntil(
    { since, service: 'bridge' },
    (es) => es.some((e) => e.endpoint.endsWith('/ssh-upload-pack')),
    20_000,
  );
  return entries.find((e) => e.endpoint.endsWith('/ssh-upload-pack'));
}

describe('a world started with a tunnel profile', () => {
  it.each<[TunnelProfileName, string, RegExp]>([
    ['gitlab-shell-14.56', 'forwarded as the client sent it', /0009done\n$/],
    ['gitlab-shell-14.57.6', 'closed after done with a flush added', /0009done\n0000$/],
  ])(
    '%s: stack.json names it; the v0 upload-pack body is %s',
    async (profile, _what, tail) => {
      const world = await startWorld({ topology: KIT_TOPOLOGY, tunnelProfile: profile });
      worlds.push(world);
      expect(world.stackJson.routerTopology?.tunnelProfile).toBe(profile);
      const tunnel = await v0Clone(world);
      expect(tunnel?.fields).toMatchObject({ stdin_tail: expect.stringMatching(tail) });
    },
    180_000,
  );
});
