import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from './attempt.js';
import { EXIT_BOUND_MS, FAULTS, knownGap } from './faults.js';
import { OPERATIONS, removeAttempt } from './operations.js';
import { type Attempt, renderMatrix, writeResult } from './report.js';
import { FaultWorld, settings, TIMEOUTS } from './world.js';

/**
 * The fault matrix (`npm run test:faults`): every operation × every fault, `FAULTS_REPEATS` times
 * (default 5) at random offsets (seed `FAULTS_SEED`), on one stack with a `FAULTS_REPO_MIB` (default
 * 200) MiB repository. `FAULTS_ONLY` / `FAULTS_ROWS` (regular expressions) pick columns and rows.
 * The table is printed and written to `test/results/faults.md`.
 */
const ops = OPERATIONS.filter((o) => !settings.rows || settings.rows.test(o.id));
const faults = FAULTS.filter((f) => !settings.only || settings.only.test(f.id));
const attempts: Attempt[] = [];
const baselineMs = new Map<string, number>();
let world: FaultWorld;
const started = Date.now();

/** mulberry32: the offsets of a run are reproducible from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(settings.seed);

beforeAll(async () => {
  world = await FaultWorld.start();
  // One undisturbed run per operation: the warm-up, and the duration the fault offsets are drawn from.
  for (const op of ops) {
    const tag = `${op.id}-baseline`;
    const run = op.start(world, tag);
    const exit = await run.exited;
    if (exit.code !== 0) throw new Error(`baseline ${op.id} failed: ${run.stderr()}`);
    const wrong = await op.verify(world, tag);
    if (wrong) throw new Error(`baseline ${op.id}: ${wrong}`);
    baselineMs.set(op.id, exit.at - run.started);
    await removeAttempt(world, tag);
    await op.clean?.(world, tag);
  }
});

afterAll(async () => {
  if (attempts.length > 0) {
    const meta = [
      `Run ${new Date(started).toISOString()}, ${((Date.now() - started) / 60_000).toFixed(1)} min; ${settings.repeats} repeats per mid-transfer cell, ${settings.beforeRepeats} per cell of a fault in place before the operation, seed ${settings.seed}; repository ${settings.repoMiB} MiB of incompressible files (${world.large.packBytes} bytes packed), served by cell_us0 through the router (SSH → ${settings.cellProtocol === 'h2c' ? 'HTTP/2 (h2c)' : 'HTTP/1.1'} tunnel → bridge → mock Gitaly).`,
      `Latest undisturbed durations: ${[...baselineMs].map(([id, ms]) => `${id} ${(ms / 1000).toFixed(1)} s`).join(', ')}. Mid-transfer faults land at 15–70 % of the latest undisturbed duration of the operation.`,
      `Stack timeouts: tunnel idle ${TIMEOUTS.tunnelIdleMs / 1000} s, internal API ${TIMEOUTS.internalApiMs / 1000} s, pre-authorization ${TIMEOUTS.preauthMs / 1000} s; exit bound ${EXIT_BOUND_MS / 1000} s after the fault (for a fault in place from the start: after the undisturbed duration of the operation).`,
      'Reproduce: `npm run test:faults` (`FAULTS_REPEATS`, `FAULTS_BEFORE_REPEATS`, `FAULTS_REPO_MIB`, `FAULTS_SEED`, `FAULTS_ONLY`, `FAULTS_ROWS`, `FAULTS_CELL_PROTOCOL`).',
    ];
    const text = renderMatrix(ops, faults, attempts, meta);
    const file = writeResult(process.env.FAULTS_RESULT_FILE ?? 'faults.md', text);
    process.stdout.write(`\n${text}\nwritten to ${file}\n`);
  }
  await world?.stop();
});

for (const fault of faults) {
  describe(`${fault.id}: ${fault.label}`, () => {
    for (const op of ops) {
      if (fault.appliesTo && !fault.appliesTo(op)) continue;
      it(op.label, async () => {
        const mine: Attempt[] = [];
        const repeats = fault.when === 'mid' ? settings.repeats : settings.beforeRepeats;
        for (let repeat = 1; repeat <= repeats; repeat++) {
          const baseline = baselineMs.get(op.id) ?? 2_000;
          const offsetMs = Math.round(baseline * (0.15 + 0.55 * random()));
          const attempt = await runAttempt(world, op, fault, repeat, offsetMs, baseline);
          attempts.push(attempt);
          mine.push(attempt);
          // Offsets follow the operation's latest undisturbed duration (the first one is the slowest:
          // cold caches), so the next mid-transfer fault still lands inside the transfer.
          if (attempt.againMs !== undefined) baselineMs.set(op.id, attempt.againMs);
        }
        const broken = mine.flatMap((a) => a.failures.map((f) => `#${a.repeat}: ${f}`));
        expect(broken.filter((f) => !knownGap(op.id, fault.id, f.replace(/^#\d+: /, '')))).toEqual([]);
      });
    }
  });
}
