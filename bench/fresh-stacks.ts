/**
 * @file The large clone on fresh stacks (issue 25 "the slow mode"): the router's CPU per large clone
 * differed by 2× between stack starts, so one start's median hides it. Each round starts the stack
 * anew on the run's data, warms it up with a small clone, lets it idle (full mode: 12 s, past V8's
 * memory reducer), clones the large repository once through the router, and stops it; the
 * report shows min / median / max of the router's CPU per clone and per GiB.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { CELLS_USER, PROJECTS } from './bench-data.js';
import { sshCommandLine } from './openssh.js';
import { describeFailure, ownCpu, run } from './proc.js';
import { startBenchStack } from './stack-runner.js';
import { median } from './stats.js';

export interface FreshStackRun {
  /** The router's CPU seconds during the clone. */
  routerCpu: number;
  wallMs: number;
}

export interface FreshStacksResult {
  runs: FreshStackRun[];
  routerCpu: { min: number; median: number; max: number };
  /** Idle time before each large clone (absent in results written before it existed: none). */
  idleMs?: number;
}

export interface FreshStacksInput {
  /** The run folder with the benchmark's repositories placed (the stack's data folder). */
  dataDir: string;
  env: Record<string, string>;
  baseEnv: NodeJS.ProcessEnv;
  scratch: string;
  starts: number;
  /** Idle time between the warm-up clone and the large clone. */
  idleMs: number;
  head: string;
  timeoutMs: number;
  log(line: string): void;
}

/** One fresh stack: started, one large clone through its router, stopped. */
async function oneStart(i: FreshStacksInput, round: number): Promise<FreshStackRun> {
  const stack = await startBenchStack(i.dataDir, { env: i.env, timeoutMs: 120_000 });
  try {
    const user = stack.json.users.find((u) => u.username === CELLS_USER);
    if (!user) throw new Error(`stack.json has no user ${CELLS_USER}`);
    const env = { ...i.baseEnv, GIT_SSH_COMMAND: sshCommandLine(user.privateKey, stack.json.knownHosts) };
    // Warmed up as in the run's own stack (bench/contenders.ts): one small clone first.
    const warm = join(i.scratch, `fresh-warm-${round}`);
    const w = await run('git', ['clone', '-q', '--bare', stack.url(PROJECTS.small.path), warm], {
      env,
      timeoutMs: i.timeoutMs,
    });
    await rm(warm, { recursive: true, force: true });
    if (w.code !== 0) throw new Error(`warm-up clone: ${describeFailure(w)}`);
    // A router in production has idled before it serves a large clone: so does this one.
    await setTimeout(i.idleMs);
    const cpu = ownCpu(stack.pid('router'));
    const before = cpu() ?? 0;
    const dest = join(i.scratch, `fresh-${round}`);
    const r = await run('git', ['clone', '-q', '--bare', stack.url(PROJECTS.large.path), dest], {
      env,
      timeoutMs: i.timeoutMs,
    });
    const routerCpu = (cpu() ?? 0) - before;
    if (r.code !== 0) throw new Error(`git clone: ${describeFailure(r)}`);
    const head = await run('git', ['--git-dir', dest, 'rev-parse', 'refs/heads/main'], {
      timeoutMs: 30_000,
      keepStdout: true,
    });
    await rm(dest, { recursive: true, force: true });
    if (head.stdout.trim() !== i.head) throw new Error(`clone has main at ${head.stdout.trim()}`);
    return { routerCpu, wallMs: r.ms };
  } finally {
    await stack.stop();
  }
}

export async function freshStackClones(i: FreshStacksInput): Promise<FreshStacksResult> {
  const runs: FreshStackRun[] = [];
  for (let round = 1; round <= i.starts; round++) {
    const r = await oneStart(i, round);
    i.log(
      `fresh stack ${round}/${i.starts}: router ${r.routerCpu.toFixed(2)} s CPU, ${(r.wallMs / 1000).toFixed(2)} s`,
    );
    runs.push(r);
  }
  const cpu = runs.map((r) => r.routerCpu);
  return {
    runs,
    routerCpu: { min: Math.min(...cpu), median: median(cpu) ?? 0, max: Math.max(...cpu) },
    idleMs: i.idleMs,
  };
}
