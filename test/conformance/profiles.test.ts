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
import { reportTable, runChecks } from '../../conformance/runner.js';
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

describe("the kit's push checks against our router on each push profile", () => {
  it.each<[TunnelProfileName, Record<string, string>, RegExp | undefined]>([
    [
      'gitlab-shell-14.56',
      { 'S13-shape': 'fail', 'S13-jwt': 'pass' },
      /1 receive-pack request\(s\) for one push/,
    ],
    [
      'gitlab-shell-14.57.4',
      { 'S13-shape': 'pass', 'S13-jwt': 'fail' },
      /request 2: Shell JWT signed \d\.\d s before the request/,
    ],
    ['gitlab-shell-14.57.6', { 'S13-shape': 'pass', 'S13-jwt': 'pass' }, undefined],
  ])(
    '%s: %j',
    async (profile, expected, seen) => {
      const world =
        worlds.find((w) => w.stackJson.routerTopology?.tunnelProfile === profile) ??
        (await startWorld({ topology: KIT_TOPOLOGY, tunnelProfile: profile }));
      if (!worlds.includes(world)) worlds.push(world);
      const ssh = world.stackJson.routerTopology?.ssh;
      const report = await runChecks(
        world.stackJson,
        { ssh, ours: true },
        { only: ['S13-shape', 'S13-jwt'], profile },
      );
      const verdicts = Object.fromEntries(report.results.map((r) => [r.id, r.verdict.kind]));
      expect(verdicts, reportTable(report)).toEqual(expected);
      const failure = report.results.find((r) => r.verdict.kind === 'fail')?.verdict;
      if (seen) expect(failure).toMatchObject({ seen: expect.stringMatching(seen) });
      // The profile's table expects exactly these FAILs: reported "expected FAIL", not counted.
      expect(report.results.filter((r) => r.expected).map((r) => r.id)).toEqual(
        Object.keys(expected).filter((id) => expected[id] === 'fail'),
      );
      expect(report.failed).toBe(0);
      if (seen) expect(reportTable(report)).toMatch(/expected FAIL/);
    },
    180_000,
  );
});
