/**
 * @file Runs checks in order against a router under test, a world given: a verdict per check
 * ("not run" when its needs are not given; a check that throws fails with the error), a table for
 * people and a JSON report.
 */
import { writeFileSync } from 'node:fs';
import type { StackJson } from '../lib/contracts/stack.js';
import { DEFAULT_TUNNEL_PROFILE, isTunnelProfileName } from '../lib/contracts/tunnel-profile.js';
import { type ConformanceCheck, divergence, fail, notRun, type Verdict } from './check.js';
import { CHECKS } from './checks/index.js';
import { checkContext, type RouterUnderTest } from './context.js';
import { LEARN_MODE_DIVERGENCES } from './learn-mode.js';
import { skipLongCase } from './long-cases.js';
import { expectedFails } from './profiles.js';

export interface CheckResult {
  id: string;
  title: string;
  source: string;
  verdict: Verdict;
  /** A FAIL the profile is expected to give behind this edge (`profiles.ts`): not counted in `failed`. */
  expected?: boolean;
  durationMs: number;
}

export interface ConformanceReport {
  profile: string;
  edge: string;
  router: RouterUnderTest;
  results: CheckResult[];
  failed: number;
}

export interface RunOptions {
  only?: string[];
  profile?: string;
  edge?: string;
  checks?: readonly ConformanceCheck[];
  /** Run the long edge cases whatever the edge's timeouts (`--long`; `long-cases.ts`). */
  long?: boolean;
  /** GitLab's routes snapshot (`--routes`; H6). */
  routes?: string;
}

export async function runChecks(
  stack: StackJson,
  router: RouterUnderTest,
  options: RunOptions = {},
): Promise<ConformanceReport> {
  const all = options.checks ?? CHECKS;
  const unknown = (options.only ?? []).filter((id) => !all.some((c) => c.id === id));
  if (unknown.length > 0)
    throw new Error(`no check ${unknown.join(', ')} (there are ${all.map((c) => c.id).join(', ')})`);
  const profile = options.profile ?? DEFAULT_TUNNEL_PROFILE;
  const expected = isTunnelProfileName(profile) ? expectedFails(profile, options.edge) : [];
  const ctx = checkContext(stack, router, options.routes);
  const results: CheckResult[] = [];
  try {
    for (const check of all.filter((c) => !options.only || options.only.includes(c.id))) {
      const started = Date.now();
      const verdict = learnModeDivergence(
        check.id,
        router,
        skipLongCase(check, stack, options, router) ?? (await verdictOf(check, router, () => check.run(ctx))),
      );
      results.push({
        id: check.id,
        title: check.title,
        source: check.source,
        verdict,
        ...(verdict.kind === 'fail' && expected.includes(check.id) ? { expected: true } : {}),
        durationMs: Date.now() - started,
      });
    }
  } finally {
    ctx.close();
  }
  return {
    profile,
    edge: options.edge ?? 'none',
    router,
    results,
    failed: results.filter((r) => r.verdict.kind === 'fail' && !r.expected).length,
  };
}

/** A FAIL of our learn-mode router where learn mode diverges by design, as a known divergence. */
function learnModeDivergence(id: string, router: RouterUnderTest, verdict: Verdict): Verdict {
  const reason = router.learnMode ? LEARN_MODE_DIVERGENCES[id] : undefined;
  return reason && verdict.kind === 'fail' ? divergence(`${reason}: ${verdict.seen}`) : verdict;
}

async function verdictOf(check: ConformanceCheck, router: RouterUnderTest, run: () => Promise<Verdict>) {
  const missing = check.needs.filter((n) => router[n] === undefined);
  if (missing.length > 0) return notRun(`needs --${missing.join(' and --')}`);
  try {
    return await run();
  } catch (err) {
    return fail(`the check threw: ${(err as Error).message}`);
  }
}

const LABEL: Record<Verdict['kind'], string> = {
  pass: 'PASS',
  fail: 'FAIL',
  divergence: 'known divergence',
  'not-run': 'not run',
};

/** One line per check: id, what it asserts, the verdict and what was seen (or why). */
export function reportTable(report: ConformanceReport): string {
  const lines = report.results.map((r) => {
    const v = r.verdict;
    const why =
      v.kind === 'fail' ? v.seen : v.kind === 'divergence' ? v.reason : v.kind === 'not-run' ? v.why : '';
    const label = r.expected ? 'expected FAIL' : LABEL[v.kind];
    return `${r.id.padEnd(4)} ${label.padEnd(16)} ${r.title}${why ? `\n       ${why}` : ''}`;
  });
  const summary = `${report.results.length} checks, ${report.failed} failed (profile ${report.profile}, edge ${report.edge})`;
  return `${lines.join('\n')}\n${summary}\n`;
}

export function writeReport(file: string, report: ConformanceReport): void {
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
