/**
 * @file The scale-out workload (issue 25): HAProxy (`mode tcp`, PROXY protocol v2, health check) in
 * front of two `learn` routers of the running world. After a warm-up through both, N concurrent small
 * clones through both, then through the first router alone, then through both with the cell's mock
 * Gitaly limiting upload-packs (`SCALE_OUT_GITALY_LIMITS`, set by the control API): errors, the split between the routers (their
 * `gitlab_cells_router_ssh_git_commands_total`), throughput as a ratio, and the client address
 * reaching `check_ip`. Then the failure run: one router SIGKILLed (by pid) mid-burst, HAProxy's
 * health check takes it out, the clones in flight on it fail, the rest succeed, and a burst after
 * it is out succeeds whole.
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ControlClient } from '../fixture/control-client.js';
import { type GitalyConcurrencyLimit, worldControl } from '../fixture/world-control.js';
import { machineBusySeconds, ownCpu, sleep } from './proc.js';
import {
  type BurstSpec,
  type CheckIpResult,
  type CloneOutcome,
  checkIps,
  cloneBurst,
  failureCauses,
  journalMark,
} from './scale-out-clones.js';
import {
  BALANCER_ADDRESS,
  type BalancedRouter,
  balancerKnownHosts,
  MAX_CONN_PER_ROUTER,
  routerMetric,
  type ScaleOutBalancer,
  startBalancedRouter,
  startScaleOutHaproxy,
  waitStatus,
} from './scale-out-servers.js';
import type { BenchStack } from './stack-runner.js';
import { type LatencySummary, summarize } from './stats.js';

export interface ScaleOutContext {
  stack: BenchStack;
  /** Environment of the stack's services (the routers get it too). */
  stackEnv: Record<string, string>;
  baseEnv: NodeJS.ProcessEnv;
  /** The benchmark's run folder: HAProxy's config and log, the clones. */
  dir: string;
  project: string;
  head: string;
  privateKey: string;
  clones: number;
  timeoutMs: number;
  /** The mock Gitaly limits of the limited burst (default `SCALE_OUT_GITALY_LIMITS`). */
  gitalyLimits?: GitalyConcurrencyLimit[];
  log(line: string): void;
}

export interface ScaleOutBurst {
  clones: number;
  errors: number;
  firstError?: string;
  /** Failed clones by cause (`failureCause`). */
  errorCauses: Record<string, number>;
  wallMs: number;
  clonesPerSecond: number;
  latency?: LatencySummary;
  /** git commands each router ran during the burst (its metrics, before and after). */
  perRouter: Record<string, number>;
  /** Connections the routers closed for their PROXY policy or header (missing, late, malformed). */
  proxyRefused: number;
  /** CPU seconds of each router during the burst. */
  routerCpu: Record<string, number>;
  /** Busy share of all the machine's cores during the burst. */
  machineBusy: number;
}

export interface ScaleOutFailover {
  clones: number;
  killed: string;
  /** git sessions the killed router ran just before the kill (its counters). */
  sessionsOnKilled: number;
  failed: number;
  succeeded: number;
  /** git's standard error of a failed clone. */
  failedStderr?: string;
  /** From the kill to HAProxy's `show stat` reporting the router DOWN. */
  downAfterMs: number | undefined;
  /** Clones started once the router was out. */
  after: { clones: number; errors: number; firstError?: string; errorCauses: Record<string, number> };
}

export interface ScaleOutResult {
  routing: 'learn';
  cores: number;
  alone: ScaleOutBurst;
  pair: ScaleOutBurst;
  /** Through both routers with the cell's mock Gitaly limiting upload-packs (absent before it existed). */
  limited?: ScaleOutBurst & { limits: GitalyConcurrencyLimit[] };
  /** |a − b| / mean of the two routers' git commands in the pair burst. */
  spread: number;
  /** Clones per second through both routers / through the first alone. */
  throughputRatio: number;
  checkIp: CheckIpResult;
  failover: ScaleOutFailover;
  /** Connections the routers closed for the PROXY protocol, by the reason they logged. */
  proxyRefusals: Record<string, number>;
}

/**
 * Gitaly's `[[concurrency]]` for the limited burst: fewer upload-packs at once on the one repository
 * than HAProxy lets through (2 × MAX_CONN_PER_ROUTER), the rest queued within Gitaly's bounds.
 */
export const SCALE_OUT_GITALY_LIMITS: GitalyConcurrencyLimit[] = [
  {
    rpc: '/gitaly.SSHService/SSHUploadPackWithSidechannel',
    maxPerRepo: 25,
    maxQueueSize: 100,
    maxQueueWaitMs: 30_000,
  },
];

const GIT_COMMANDS = 'gitlab_cells_router_ssh_git_commands_total';
const SESSIONS = 'gitlab_cells_router_ssh_sessions_total';
const PROXY_REFUSED = 'gitlab_cells_router_ssh_proxy_refused_total';

/** Each router's git commands, and the PROXY refusals of all (`refused`). */
async function counters(routers: readonly BalancedRouter[]): Promise<Record<string, number>> {
  const out: Record<string, number> = { refused: 0 };
  for (const r of routers) {
    out[r.name] = await routerMetric(r, GIT_COMMANDS);
    out.refused = (out.refused ?? 0) + (await routerMetric(r, PROXY_REFUSED));
  }
  return out;
}

/** One burst through `frontend`, measured. */
async function burst(
  spec: BurstSpec,
  routers: readonly BalancedRouter[],
  phase: number,
  count: number,
): Promise<{ result: ScaleOutBurst; outcomes: CloneOutcome[] }> {
  const before = await counters(routers);
  const cpu = routers.map((r) => [r.name, ownCpu(r.pid), ownCpu(r.pid)()] as const);
  const busy = machineBusySeconds();
  const started = performance.now();
  const outcomes = await cloneBurst(spec, phase, count);
  const wallMs = performance.now() - started;
  const machineBusy = (machineBusySeconds() - busy) / (wallMs / 1000) / availableParallelism();
  const after = await counters(routers);
  const ok = outcomes.filter((o) => o.ok);
  const failed = outcomes.find((o) => !o.ok);
  const result: ScaleOutBurst = {
    clones: count,
    errors: count - ok.length,
    errorCauses: failureCauses(outcomes),
    wallMs,
    clonesPerSecond: ok.length / (wallMs / 1000),
    latency: summarize(ok.map((o) => o.ms)),
    perRouter: Object.fromEntries(routers.map((r) => [r.name, (after[r.name] ?? 0) - (before[r.name] ?? 0)])),
    proxyRefused: (after.refused ?? 0) - (before.refused ?? 0),
    routerCpu: Object.fromEntries(
      cpu.map(([name, counter, start]) => [name, (counter() ?? 0) - (start ?? 0)]),
    ),
    machineBusy,
  };
  if (failed?.error) result.firstError = failed.error;
  return { result, outcomes };
}

/** A burst through both routers with the project's cell's mock Gitaly limiting (then its limits reset). */
async function limitedBurst(
  ctx: ScaleOutContext,
  spec: BurstSpec,
  routers: readonly BalancedRouter[],
): Promise<ScaleOutResult['limited']> {
  const { control, projects } = ctx.stack.json;
  const cell = projects.find((p) => p.path === ctx.project)?.cell;
  if (!cell) throw new Error(`stack.json has no project ${ctx.project}`);
  const gitaly = worldControl(new ControlClient(control.url, control.tokenFile)).gitaly(cell);
  const limits = ctx.gitalyLimits ?? SCALE_OUT_GITALY_LIMITS;
  await gitaly.concurrency(limits);
  try {
    const { result } = await burst(spec, routers, 6, ctx.clones);
    return { ...result, limits };
  } finally {
    await gitaly.reset();
  }
}

/** git sessions running on `router`: git commands started less sessions ended (its counters). */
async function runningSessions(router: BalancedRouter): Promise<number> {
  return (await routerMetric(router, GIT_COMMANDS)) - (await routerMetric(router, SESSIONS));
}

/**
 * SIGKILLs `victim` once it runs at least `least` git sessions (polled), or when `done()` before
 * that; resolves with the sessions it ran when last looked at and the time of the kill.
 */
async function killWhenBusy(
  victim: BalancedRouter,
  least: number,
  done: () => boolean,
): Promise<{ running: number; at: number }> {
  let running = 0;
  while (!done()) {
    running = await runningSessions(victim).catch(() => 0);
    if (running >= least) break;
    await sleep(20);
  }
  process.kill(victim.pid, 'SIGKILL');
  return { running, at: performance.now() };
}

/** The failure run: `victim` SIGKILLed mid-burst, with clones in flight on it. */
async function failover(
  spec: BurstSpec,
  haproxy: ScaleOutBalancer,
  victim: BalancedRouter,
  count: number,
): Promise<ScaleOutFailover> {
  let finished = false;
  const burstDone = cloneBurst(spec, 4, count).finally(() => {
    finished = true;
  });
  // Busy: an eighth of the burst, but no more than half of what HAProxy hands it at once.
  const busy = Math.max(2, Math.min(Math.floor(count / 8), MAX_CONN_PER_ROUTER / 2));
  const kill = await killWhenBusy(victim, busy, () => finished);
  const down = waitStatus(haproxy, [victim.name], /^DOWN/, 15_000).then((seen) =>
    seen ? performance.now() - kill.at : undefined,
  );
  const outcomes = await burstDone;
  const downAfterMs = await down;
  const failed = outcomes.filter((o) => !o.ok);
  const afterCount = Math.max(10, Math.ceil(count / 10));
  const later = await cloneBurst(spec, 5, afterCount);
  const laterFailed = later.find((o) => !o.ok);
  return {
    clones: count,
    killed: victim.name,
    sessionsOnKilled: kill.running,
    failed: failed.length,
    succeeded: count - failed.length,
    ...(failed[0]?.error ? { failedStderr: failed[0].error } : {}),
    downAfterMs,
    after: {
      clones: afterCount,
      errors: later.filter((o) => !o.ok).length,
      errorCauses: failureCauses(later),
      ...(laterFailed?.error ? { firstError: laterFailed.error } : {}),
    },
  };
}

/** The reasons of the routers' `PROXY protocol: connection refused` log lines, counted. */
async function refusalReasons(stack: BenchStack, routers: readonly BalancedRouter[]) {
  const out: Record<string, number> = {};
  for (const r of routers) {
    const text = await readFile(join(stack.dataDir, 'logs', `${r.name}.log`), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (!line.includes('PROXY protocol: connection refused')) continue;
      const reason = String((JSON.parse(line) as { reason?: unknown }).reason);
      out[reason] = (out[reason] ?? 0) + 1;
    }
  }
  return out;
}

/** Starts the two routers and HAProxy, runs the bursts and the failure run, stops what it started. */
export async function scaleOut(ctx: ScaleOutContext): Promise<ScaleOutResult> {
  const routers: BalancedRouter[] = [];
  let haproxy: ScaleOutBalancer | undefined;
  try {
    for (const name of ['router-a', 'router-b'])
      routers.push(await startBalancedRouter(ctx.stack, name, { env: ctx.stackEnv, timeoutMs: 30_000 }));
    const [a, b] = routers as [BalancedRouter, BalancedRouter];
    haproxy = await startScaleOutHaproxy(join(ctx.dir, 'haproxy'), routers);
    if (!(await waitStatus(haproxy, [a.name, b.name], /^UP/, 15_000)))
      throw new Error(
        `HAProxy's health check does not pass: ${JSON.stringify(await haproxy.serverStatus())}`,
      );
    ctx.log(`scale-out: HAProxy ${haproxy.listen} (pid ${haproxy.pid}) → ${a.ssh}, ${b.ssh}`);
    const spec: BurstSpec = {
      frontend: haproxy.listen,
      project: ctx.project,
      head: ctx.head,
      privateKey: ctx.privateKey,
      knownHosts: await balancerKnownHosts(
        ctx.stack,
        [haproxy.listen, haproxy.aloneListen],
        join(ctx.dir, 'haproxy', 'known_hosts'),
      ),
      baseEnv: ctx.baseEnv,
      dir: join(ctx.dir, 'scale-out-clones'),
      timeoutMs: ctx.timeoutMs,
    };
    // Warm-up: each router learns the route and runs its code paths hot. Then both routers first:
    // with both saturated, HAProxy's queue hands each slot to the router that frees it, so the split
    // follows their speed, and a router that had just served the alone burst's thousand clones spent
    // less CPU per clone than one that had not (548 / 452 after the alone burst).
    await cloneBurst(spec, 1, Math.min(ctx.clones, 2 * MAX_CONN_PER_ROUTER));
    const mark = await journalMark(ctx.stack.json.journal);
    const pair = await burst(spec, routers, 2, ctx.clones);
    ctx.log(`scale-out: ${ctx.clones} clones, two routers: ${summary(pair.result)}`);
    const alone = await burst({ ...spec, frontend: haproxy.aloneListen }, routers, 3, ctx.clones);
    ctx.log(`scale-out: ${ctx.clones} clones, one router: ${summary(alone.result)}`);
    const limited = await limitedBurst(ctx, spec, routers);
    if (limited)
      ctx.log(`scale-out: ${ctx.clones} clones, two routers, Gitaly limiter on: ${summary(limited)}`);
    const checkIp = await checkIps(
      ctx.stack.json.journal,
      [...alone.outcomes, ...pair.outcomes],
      BALANCER_ADDRESS,
      mark,
    );
    const fail = await failover(spec, haproxy, b, ctx.clones);
    ctx.log(
      `scale-out failover: ${fail.failed} of ${fail.clones} failed (${fail.sessionsOnKilled} git sessions on ${fail.killed}), DOWN after ${fail.downAfterMs?.toFixed(0) ?? '–'} ms; then ${fail.after.errors} errors in ${fail.after.clones}`,
    );
    const [na, nb] = [pair.result.perRouter[a.name] ?? 0, pair.result.perRouter[b.name] ?? 0];
    return {
      routing: 'learn',
      cores: availableParallelism(),
      alone: alone.result,
      pair: pair.result,
      limited,
      spread: na + nb === 0 ? 1 : Math.abs(na - nb) / ((na + nb) / 2),
      throughputRatio: pair.result.clonesPerSecond / alone.result.clonesPerSecond,
      checkIp,
      failover: fail,
      proxyRefusals: await refusalReasons(ctx.stack, routers),
    };
  } finally {
    await haproxy?.stop();
    for (const r of routers) await r.stop();
  }
}

function summary(b: ScaleOutBurst): string {
  const split = Object.entries(b.perRouter)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `${b.errors} errors (${b.proxyRefused} PROXY refusals), ${b.clonesPerSecond.toFixed(1)} clones/s, ${split}, machine ${(b.machineBusy * 100).toFixed(0)} % busy`;
}
