/**
 * @file Checks of the router's Topology Service use (reference-cell.md §5.1 S1, S5, S6).
 */
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, fail, firstFailure, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import { ROUTED } from '../world-plan.js';
import { allowedOf, claimOf, isClassify, routeClassify, where } from './journal-views.js';

/** Clones `path` (as typed by the user) and returns the journal of it. */
async function cloneJournal(ctx: CheckContext, path: string, name: string) {
  const since = await ctx.cursor();
  const result = await ctx.git(['clone', '--quiet', ctx.url(path), ctx.scratch(name)]);
  return { result, entries: await ctx.journalSince(since) };
}

/** Path shapes gitlab-shell's resolver reduces to the claim `route=<top-level group>`. */
const PATH_SHAPES = [
  `${ROUTED.project}.git`,
  `/${ROUTED.project}.git`,
  `//${ROUTED.project}.git`,
  `${ROUTED.project}`,
];

export const S1: ConformanceCheck = {
  id: 'S1',
  title: 'the route claim is the top-level group for every path shape, and the owning cell answers /allowed',
  source: 'gitlab-shell internal/command/shared/cells resolver_test.go',
  needs: ['ssh'],
  async run(ctx) {
    const verdicts: Verdict[] = [];
    for (const shape of PATH_SHAPES) {
      const since = await ctx.cursor();
      await ctx.ssh(`git-upload-pack '${shape}'`);
      const entries = await ctx.journalSince(since);
      const claims = entries
        .filter(isClassify)
        .map(claimOf)
        .filter((c) => c?.type === 'route');
      const allowed = allowedOf(entries);
      const ok = claims.length > 0 && claims.every((c) => c?.value === ROUTED.group);
      const routed = allowed.length > 0 && allowed.every((e) => e.cell === ROUTED.cell);
      verdicts.push(
        ok && routed
          ? pass()
          : fail(`${shape}: route claims ${JSON.stringify(claims)}; /allowed at ${where(allowed)}`),
      );
    }
    return firstFailure(verdicts);
  },
};

/** S5's judgement: one Classify for the route claim, then /allowed at the legacy cell only. */
export function judgeOneClassify(entries: JournalEntry[], code: string, legacy: string): Verdict {
  const calls = routeClassify(entries, ROUTED.group);
  const allowed = allowedOf(entries);
  if (calls.length !== 1)
    return fail(`${code}: ${calls.length} Classify calls for route=${ROUTED.group} (want exactly 1)`);
  if (allowed.length === 0 || allowed.some((e) => e.cell !== legacy))
    return fail(`${code}: /allowed at ${where(allowed)} (want the legacy cell ${legacy})`);
  return pass();
}

export const S5: ConformanceCheck = {
  id: 'S5',
  title: 'NOT_FOUND / PERMISSION_DENIED / INVALID_ARGUMENT: one Classify, then the legacy cell',
  source: 'gitlab-shell topology client retry table (non-transient codes)',
  needs: ['ssh'],
  async run(ctx) {
    const verdicts: Verdict[] = [];
    for (const code of ['NOT_FOUND', 'PERMISSION_DENIED', 'INVALID_ARGUMENT'] as const) {
      await ctx.control.topologyService.answer({ claim: { type: 'route', value: ROUTED.group }, code });
      try {
        const { entries } = await cloneJournal(ctx, `${ROUTED.project}.git`, `s5-${code}`);
        verdicts.push(judgeOneClassify(entries, code, ctx.legacyCell));
      } finally {
        await ctx.control.topologyService.reset();
      }
    }
    return firstFailure(verdicts);
  },
};

export const S6: ConformanceCheck = {
  id: 'S6',
  title: 'UNAVAILABLE twice, then OK: three attempts, and the clone is routed and succeeds',
  source: 'gitlab-shell topology client ErrUntilAttempt tests (50 → 250 ms backoff)',
  needs: ['ssh'],
  async run(ctx) {
    await ctx.control.topologyService.failNext(2, 'UNAVAILABLE');
    try {
      const { result, entries } = await cloneJournal(ctx, `${ROUTED.project}.git`, 's6');
      const classify = entries.filter(isClassify);
      const first = classify[0] && claimOf(classify[0]);
      const same = classify.filter((e) => JSON.stringify(claimOf(e)) === JSON.stringify(first));
      const statuses = same.map((e) => e.status).join(',');
      if (statuses !== 'UNAVAILABLE,UNAVAILABLE,OK')
        return fail(`Classify of ${JSON.stringify(first)} answered ${statuses || 'never'}`);
      if (result.code !== 0) return fail(`git clone exited ${result.code}: ${result.stderr.trim()}`);
      return pass();
    } finally {
      await ctx.control.topologyService.reset();
    }
  },
};
