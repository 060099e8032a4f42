import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT_BOUND_MS, type Fault, type FaultContext } from './faults.js';
import { type Operation, quarantineLeftovers, refsOf, removeAttempt } from './operations.js';
import type { Attempt } from './report.js';
import { type FaultWorld, type GitRun, signalGroup } from './world.js';

/** How long a whole operation may take on a loaded machine before it counts as hung. */
const HUNG_MS = 180_000;

/** How long after the fault is healed an interrupted push's quarantine may still exist. */
const QUARANTINE_BOUND_MS = 5_000;

/** The line of git's stderr a user reads first: the `ERROR:` box line, else the last `fatal:`/error line. */
export function userMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const error = lines.find((l) => /ERROR:/.test(l));
  const last = [...lines].reverse().find((l) => /^(fatal|error):|denied|unavailable/i.test(l));
  return (error ?? last ?? lines.at(-1) ?? '').replace(/^remote:\s*/, '').slice(0, 200);
}

/** Why a failure's output is not something a user understands, or undefined when it is. */
export function unreadable(stderr: string): string | undefined {
  if (stderr.trim() === '') return 'git printed nothing';
  if (/\n\s+at .+:\d+:\d+\)?|TypeError|ReferenceError|\[object Object\]|\bundefined\b/.test(stderr)) {
    return `internal details in the message: ${stderr.trim().slice(0, 300)}`;
  }
  if (!/ERROR|fatal:|error:|denied|unavailable|hung up|closed|timed out|disconnect/i.test(stderr)) {
    return `no error line: ${stderr.trim().slice(0, 300)}`;
  }
  return undefined;
}

async function exitWithin(run: GitRun, ms: number): Promise<{ code: number; at: number } | undefined> {
  return Promise.race([run.exited, sleep(ms).then(() => undefined)]);
}

/** Ends a run that did not exit by itself (continued first: it may be stopped). */
async function forceEnd(run: GitRun, failures: string[]): Promise<{ code: number; at: number }> {
  failures.push(`git hung for ${HUNG_MS / 1000} s (killed)`);
  signalGroup(run.pgid, 'SIGCONT');
  signalGroup(run.pgid, 'SIGKILL');
  return run.exited;
}

/**
 * One attempt of one cell: starts `op`, injects `fault` (before it, or `offsetMs` into it), and
 * checks everything the matrix promises. Returns the record; its `failures` are the broken promises.
 */
export async function runAttempt(
  world: FaultWorld,
  op: Operation,
  fault: Fault,
  repeat: number,
  offsetMs: number,
  baselineMs: number,
): Promise<Attempt> {
  const tag = `${op.id}-${fault.id}-${repeat}`;
  const ctx: FaultContext = { world, op, notes: [] };
  const failures: string[] = [];
  const bare = op.pushes ? world.repository(op.pushes) : undefined;
  const refsBefore = bare ? await refsOf(bare) : '';
  const via = op.http ? fault.viaHttp?.(world) : fault.via?.(world);
  const expected = fault.expectFor?.(op) ?? fault.expect;
  let faultAt = Date.now();
  let landed = true;
  let run: GitRun;
  if (fault.when === 'before') {
    faultAt = await fault.inject(ctx);
    run = op.start(world, tag, via);
  } else {
    run = op.start(world, tag, via);
    const early = await exitWithin(run, offsetMs);
    if (early) landed = false;
    else {
      ctx.run = run;
      faultAt = await fault.inject(ctx);
    }
  }
  const exit = (await exitWithin(run, HUNG_MS)) ?? (await forceEnd(run, failures));
  const exitMs = exit.at - faultAt;
  const stderr = run.stderr();
  // A fault in place from the start (e.g. at the hooks) is reached only after the transfer.
  const boundMs = EXIT_BOUND_MS + (fault.when === 'before' ? baselineMs : 0);
  if (exit.code !== 0 && exitMs > boundMs)
    failures.push(`git exited ${exitMs} ms after the fault (bound ${boundMs} ms)`);
  if (expected === 'fail' && exit.code === 0 && landed) failures.push('git succeeded despite the fault');
  if (expected === 'succeed' && exit.code !== 0) failures.push(`git failed: ${userMessage(stderr)}`);
  if (exit.code === 0) {
    const wrong = await op.verify(world, tag);
    if (wrong) failures.push(`succeeded with wrong data: ${wrong}`);
  } else if (fault.id !== 'client-killed') {
    const why = unreadable(stderr);
    if (why) failures.push(why);
  }
  failures.push(...ctx.notes.filter((n) => n.startsWith('FAIL:')).map((n) => n.slice(6)));

  // 2 s after git's exit nothing of the operation may be left on the server side.
  await sleep(Math.max(0, exit.at + 2_000 - Date.now()));
  const left = world.leftovers(run.pgid);
  if (left.length > 0)
    failures.push(`left on the server 2 s after exit: ${left.map((p) => p.cmdline).join(' | ')}`);
  if (bare && exit.code !== 0) {
    // A fault after receive-pack updated the ref (the router killed as the report goes out) may
    // leave the whole push in place: then the ref must be exactly the pushed commit.
    if ((await refsOf(bare)) !== refsBefore) {
      const wrong = await op.verify(world, tag);
      if (wrong) failures.push(`the interrupted push changed refs: ${wrong}`);
      else ctx.notes.push('the push landed completely although git reported an error');
    }
  }
  await fault.heal(ctx);
  // Once the stack serves again (a killed mock Gitaly restarted and swept what its pushes left).
  if (bare && exit.code !== 0) await checkQuarantine(bare, ctx, failures);
  const againMs = await again(world, op, tag, via, failures);
  return {
    op: op.id,
    fault: fault.id,
    repeat,
    offsetMs: fault.when === 'mid' ? offsetMs : undefined,
    landed,
    againMs,
    exitCode: exit.code,
    exitMs,
    message: exit.code === 0 ? '' : userMessage(stderr),
    notes: ctx.notes.filter((n) => !n.startsWith('FAIL:')),
    failures,
  };
}

/** An interrupted push may leave no quarantine: it must be gone within `QUARANTINE_BOUND_MS`. */
async function checkQuarantine(bare: string, ctx: FaultContext, failures: string[]): Promise<void> {
  const since = Date.now();
  let left = quarantineLeftovers(bare);
  while (left.length > 0 && Date.now() - since < QUARANTINE_BOUND_MS) {
    await sleep(100);
    left = quarantineLeftovers(bare);
  }
  if (left.length > 0) failures.push(`quarantine left behind: ${left.join(', ')}`);
  else if (Date.now() - since > 150)
    ctx.notes.push(`quarantine removed ${Date.now() - since} ms after the heal`);
}

/** The same operation once more, fault gone: it must succeed; then the attempt's traces are removed. */
async function again(
  world: FaultWorld,
  op: Operation,
  tag: string,
  via: string | undefined,
  failures: string[],
): Promise<number | undefined> {
  await removeAttempt(world, tag);
  // A push that landed already made its branch: the identical push would be a no-op, so drop it first.
  await op.clean?.(world, tag);
  const run = op.start(world, tag, via);
  const exit = (await exitWithin(run, HUNG_MS)) ?? (await forceEnd(run, failures));
  let ms: number | undefined;
  if (exit.code !== 0) failures.push(`the operation run again failed: ${userMessage(run.stderr())}`);
  else {
    const wrong = await op.verify(world, tag);
    if (wrong) failures.push(`the operation run again got wrong data: ${wrong}`);
    else ms = exit.at - run.started;
  }
  await removeAttempt(world, tag);
  await op.clean?.(world, tag);
  return ms;
}
