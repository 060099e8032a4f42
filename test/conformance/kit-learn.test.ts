/**
 * The kit against this project's other router: the `learn` router of a seed 000 world (the kit's
 * world with `seed000Routing`), run through the CLI as a user runs it. Learn mode asks the Topology
 * Service nothing, so the checks of Topology-Service routing are known divergences
 * (`conformance/learn-mode.ts`), never FAILs; everything else passes as on the topology router.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKS } from '../../conformance/checks/index.js';
import type { ConformanceReport } from '../../conformance/runner.js';
import { KIT_TOPOLOGY } from '../../conformance/world-plan.js';
import { startWorld, type World } from '../../fixture/index.js';
import { run } from '../helpers/run.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
let world: World;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'conformance-learn-'));
  const topology = JSON.parse(readFileSync(KIT_TOPOLOGY, 'utf8')) as Record<string, unknown>;
  const file = join(dir, 'world.json');
  writeFileSync(file, JSON.stringify({ ...topology, $schema: undefined, seed000Routing: true }));
  world = await startWorld({ topology: file });
});

afterAll(async () => {
  await world?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the conformance kit against our learn-mode router', () => {
  it('reports the Topology-Service checks as known divergences and passes the rest (exit 0)', {
    timeout: 180_000,
  }, async () => {
    const { router, routerTopology } = world.stackJson;
    expect(router.ssh).not.toBe(routerTopology?.ssh);
    const json = join(dir, 'report.json');
    const r = await run(
      'node',
      [
        CLI,
        'conformance',
        '--world',
        world.dataDir,
        '--ssh',
        router.ssh,
        '--http',
        router.http,
        '--json',
        json,
      ],
      { timeoutMs: 170_000 },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport;
    const verdicts = Object.fromEntries(report.results.map((x) => [x.id, x.verdict.kind]));
    const divergent = ['S1', 'S2', 'S3', 'S5', 'S6', 'S8', 'S17', 'H4', 'H5', 'H8', 'H9', 'H12'];
    const notRun = ['S3-cert', 'S12', 'S13-long', 'S13-lfs', 'S20', 'H6'];
    expect(verdicts, r.stdout).toEqual(
      Object.fromEntries(
        CHECKS.map((c) => [
          c.id,
          divergent.includes(c.id) ? 'divergence' : notRun.includes(c.id) ? 'not-run' : 'pass',
        ]),
      ),
    );
    expect(r.stdout).toMatch(/^S1 +known divergence .*\n +learn mode routes by the cells’ learn answers/m);
  });
});
