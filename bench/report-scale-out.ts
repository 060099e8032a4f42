import { type Outcome, okValue } from './outcome.js';
import type { Target } from './results.js';
import type { ScaleOutBurst, ScaleOutResult } from './scale-out.js';

type ScaleOutLimited = NonNullable<ScaleOutResult['limited']>;

/** The scale-out section of the markdown report and its targets (issue 25). */

const ms = (x: number | undefined) => (x === undefined ? '–' : `${x.toFixed(0)} ms`);

function burstRow(label: string, b: ScaleOutBurst): string {
  const split = Object.entries(b.perRouter)
    .map(([k, v]) => `${k} ${v}`)
    .join(' / ');
  const cpu = Object.entries(b.routerCpu)
    .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
    .join(' / ');
  return `| ${label} | ${b.errors} of ${b.clones} | ${split} | ${b.clonesPerSecond.toFixed(1)} | ${ms(b.latency?.p50)} / ${ms(b.latency?.p99)} | ${cpu} | ${(b.machineBusy * 100).toFixed(0)} % |`;
}

function limitsText(limits: ScaleOutLimited['limits']): string {
  return limits
    .map(
      (l) =>
        `${l.rpc.split('/').pop()}: maxPerRepo ${l.maxPerRepo}, maxQueueSize ${l.maxQueueSize}, maxQueueWait ${(l.maxQueueWaitMs ?? 0) / 1000} s`,
    )
    .join('; ');
}

function limitedText(l: ScaleOutLimited, pair: ScaleOutBurst): string {
  const causes = Object.entries(l.errorCauses)
    .map(([k, n]) => `${n} × “${k}”`)
    .join(', ');
  return `With mock Gitaly's \`[[concurrency]]\` limiter on (set while the world ran, control op \`gitaly concurrency\`): ${l.errors} of ${l.clones} clones failed${causes ? ` (${causes})` : ''}, ${(l.clonesPerSecond / pair.clonesPerSecond).toFixed(2)}× the clones per second of the burst without it, p99 ${ms(l.latency?.p99)} (without: ${ms(pair.latency?.p99)}).`;
}

function refusals(by: Record<string, number> | undefined): string {
  const entries = Object.entries(by ?? {});
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${n} × “${k}”`).join(', ');
}

export function renderScaleOut(o: Outcome<ScaleOutResult> | undefined): string[] {
  if (!o) return [];
  const head = [
    '',
    '**Scaling out** (HAProxy `mode tcp`, `send-proxy-v2`, health check, in front of two `learn` routers of the world; small clones started at once, each client from its own loopback address)',
    '',
  ];
  const v = okValue(o);
  if (!v) return [...head, `FAILED: ${o.ok ? '' : o.error.replace(/\n/g, ' ')}`];
  const f = v.failover;
  return [
    ...head,
    '| routers | errors | git commands per router | clones/s | p50 / p99 | router CPU | machine busy |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    burstRow('one (router-a alone, same HAProxy)', v.alone),
    burstRow('two', v.pair),
    ...(v.limited
      ? [burstRow(`two, mock Gitaly limiting upload-packs (${limitsText(v.limited.limits)})`, v.limited)]
      : []),
    '',
    `Two routers against one: ${v.throughputRatio.toFixed(2)}× the clones per second on ${v.cores} cores (both runs CPU-bound on the same cores, so no gain is expected here); split ${(v.spread * 100).toFixed(1)} % apart. ` +
      `check_ip at the cell's \`/allowed\`: ${v.checkIp.matched} of ${v.checkIp.clones} successful clones' own addresses (e.g. ${v.checkIp.sample.join(', ') || '–'}), HAProxy's 127.0.0.1 ${v.checkIp.balancerAddress} times. ` +
      `Connections the routers closed for the PROXY protocol (health checks included): ${refusals(v.proxyRefusals)}.`,
    ...(v.limited ? ['', limitedText(v.limited, v.pair)] : []),
    '',
    `Failure run: ${f.killed} SIGKILLed while it ran ${f.sessionsOnKilled} git sessions; ${f.failed} of ${f.clones} clones failed, ${f.succeeded} succeeded; HAProxy's health check had it DOWN ${ms(f.downAfterMs)} after the kill; ${f.after.errors} errors in ${f.after.clones} clones started after.` +
      (f.failedStderr
        ? ` A failed clone's git says: \`${f.failedStderr.replace(/\s*\|\s*/g, ' ').trim()}\``
        : ''),
  ];
}

export function scaleOutTargets(o: Outcome<ScaleOutResult> | undefined): Target[] {
  if (!o) return [];
  const v = okValue(o);
  const n = v?.pair.clones;
  return [
    {
      name: `Two routers behind HAProxy: zero errors in ${n ?? 'N'} concurrent clones`,
      measured: v
        ? `${v.pair.errors} errors (one router: ${v.alone.errors}${v.limited ? `; Gitaly limiter on: ${v.limited.errors}` : ''})`
        : 'FAILED',
      met: v ? v.pair.errors === 0 : false,
    },
    {
      name: 'Two routers behind HAProxy: load spread within 10 %',
      measured: v ? `${(v.spread * 100).toFixed(1)} % (${Object.values(v.pair.perRouter).join(' / ')})` : '–',
      met: v ? v.spread <= 0.1 : undefined,
    },
    {
      name: 'Two routers behind HAProxy: throughput against one router reported',
      measured: v ? `${v.throughputRatio.toFixed(2)}× on ${v.cores} cores` : '–',
      met: v ? true : undefined,
    },
    {
      name: 'Behind HAProxy the client’s address reaches check_ip (never HAProxy’s)',
      measured: v
        ? `${v.checkIp.matched} of ${v.checkIp.clones}, HAProxy’s ${v.checkIp.balancerAddress}`
        : '–',
      met: v ? v.checkIp.matched === v.checkIp.clones && v.checkIp.balancerAddress === 0 : undefined,
    },
    {
      name: 'A router killed mid-run: taken out by the health check, later clones succeed',
      measured: v
        ? `${v.failover.failed} failed (${v.failover.sessionsOnKilled} running on it), DOWN after ${ms(v.failover.downAfterMs)}, ${v.failover.after.errors} errors after`
        : '–',
      met: v ? v.failover.downAfterMs !== undefined && v.failover.after.errors === 0 : undefined,
    },
  ];
}
