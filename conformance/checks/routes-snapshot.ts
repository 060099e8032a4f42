/**
 * @file H6 (reference-cell.md §5.2; cells-routing.md §5): every row of GitLab's routes snapshot,
 * replayed through the HTTP front as the HTTP Router's own snapshot test replays it. The kit has no
 * copy of GitLab's file: the user gives theirs (`--routes`). The Topology Service is primed so that
 * the parameter values (`foo`, `john.doe`) lead to the routed cell and every literal top-level word
 * to a third cell (a trap, as H7's): a namespace-led path must land on the routed cell, a word-led
 * one never on the trap.
 */
import { type ConformanceCheck, fail, notRun, pass } from '../check.js';
import type { CheckContext } from '../context.js';
import { httpProbe } from '../http-probe.js';
import { readRoutesSnapshot, type SnapshotCase, snapshotCases } from '../routes-snapshot.js';
import { ROUTED } from '../world-plan.js';
import { otherCell } from './http-front.js';

/** Requests in flight at once. */
const PARALLEL = 8;
/** Paths per journal read (GitLab's snapshot gives ~15 000; the journal is read after each batch). */
const BATCH = 400;
/** Failing paths quoted in `seen`. */
const QUOTED = 5;

const hostOf = (ctx: CheckContext, cell: string): string =>
  new URL(ctx.stack.cells.find((c) => c.name === cell)?.shellEndpoint ?? '').host;

async function prime(ctx: CheckContext, cases: SnapshotCase[], trap: string): Promise<void> {
  const routed = hostOf(ctx, ROUTED.cell);
  const trapHost = hostOf(ctx, trap);
  const claims = new Map<string, string>();
  for (const c of cases)
    if (c.lead.kind === 'namespace') claims.set(c.lead.claim, routed);
    else claims.set(c.lead.word, trapHost);
  for (const [value, proxy] of claims)
    await ctx.control.topologyService.answer({ claim: { type: 'route', value }, proxy });
}

async function replay(ctx: CheckContext, cases: SnapshotCase[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++] as SnapshotCase;
      await httpProbe(ctx, c.path);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

/** What went wrong with one case, given the cells whose Rails saw its path. */
function judge(c: SnapshotCase, cells: string[], trap: string): string | undefined {
  if (c.lead.kind === 'namespace')
    return cells.length > 0 && cells.every((x) => x === ROUTED.cell)
      ? undefined
      : `${c.path} (${c.template}): at ${cells.join(', ') || 'no cell'} (want route ${c.lead.claim} → ${ROUTED.cell})`;
  return cells.includes(trap) ? `${c.path} (${c.template}): classified as route ${c.lead.word}` : undefined;
}

export const H6: ConformanceCheck = {
  id: 'H6',
  title:
    "every row of GitLab's routes snapshot (--routes): namespace-led examples routed by their top-level namespace, top-level words never classified",
  source: 'http-router test/routes/routes.spec.ts; gitlab config/routing/gitlab_routes.json',
  needs: ['http'],
  async run(ctx) {
    if (!ctx.routesSnapshot) return notRun("needs --routes <GitLab's config/routing/gitlab_routes.json>");
    const cases = snapshotCases(readRoutesSnapshot(ctx.routesSnapshot));
    const trap = otherCell(ctx);
    await prime(ctx, cases, trap);
    try {
      const wrong: string[] = [];
      for (let at = 0; at < cases.length; at += BATCH) {
        const batch = cases.slice(at, at + BATCH);
        const since = await ctx.cursor();
        await replay(ctx, batch);
        const seen = new Map<string, string[]>();
        for (const e of await ctx.journalSince(since))
          if (e.service === 'rails' && e.cell)
            seen.set(e.endpoint, [...(seen.get(e.endpoint) ?? []), e.cell]);
        for (const c of batch) {
          const why = judge(c, seen.get(c.path) ?? [], trap);
          if (why) wrong.push(why);
        }
      }
      if (wrong.length === 0) return pass();
      const more = wrong.length > QUOTED ? `; and ${wrong.length - QUOTED} more` : '';
      return fail(`${wrong.length} of ${cases.length} paths: ${wrong.slice(0, QUOTED).join('; ')}${more}`);
    } finally {
      await ctx.control.topologyService.reset();
    }
  },
};
