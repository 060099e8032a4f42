/**
 * @file When the kit runs its long edge cases (S12, S13-long: `check.long`): each lasts about the
 * edge's timeouts (a hook of twice the idle connection, a pack streaming 1.5× the idle body), so
 * the short set runs them only behind an edge scaled down far enough (every such wait ≤ 20 s, e.g.
 * `--edge cloudflare --edge-time-scale 0.1`); `--long` runs them at any scale, and `--only` naming
 * one runs it. Behind edge `none` the check itself says "not run". A case may name its own wait
 * (`check.waitMs`): S13-lfs waits out the router's Shell JWT and Rails' 60 s leeway whatever the
 * edge, so it is never in the short set.
 */
import type { StackJson } from '../lib/contracts/stack.js';
import { type ConformanceCheck, notRun, type Verdict } from './check.js';
import type { RouterUnderTest } from './context.js';

/** The longest wait of a long case the short set accepts. */
export const SHORT_SET_WAIT_MS = 20_000;

/** The longest wait of the long cases behind the world's edge (0 without one). */
export function longCaseWaitMs(stack: StackJson): number {
  const f = stack.edge?.kind === 'none' ? undefined : stack.edge?.figures;
  return f ? Math.max(2 * f.idleTimeoutMs, 1.5 * f.idleBodyTimeoutMs) : 0;
}

/** "not run" for a long case the run leaves out; undefined when it runs. */
export function skipLongCase(
  check: ConformanceCheck,
  stack: StackJson,
  options: { long?: boolean; only?: string[] },
  router: RouterUnderTest = { ours: true },
): Verdict | undefined {
  if (!check.long || options.long || options.only?.includes(check.id)) return undefined;
  const wait = check.waitMs ? check.waitMs(stack, router) : longCaseWaitMs(stack);
  if (wait <= SHORT_SET_WAIT_MS) return undefined;
  return notRun(
    check.waitMs
      ? `a long case: against this router it waits ${Math.round(wait / 1000)} s (run with --long or --only ${check.id})`
      : `a long case: behind this edge it waits ${Math.round(wait / 1000)} s (run with --long, --only ${check.id} or a scaled edge, --edge-time-scale)`,
  );
}
