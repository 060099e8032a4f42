/**
 * @file Checks of how the router passes a cell's `/allowed` answer on (reference-cell.md §5.1 S9,
 * S10, S19).
 */
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, fail, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import type { ExecResult } from '../exec.js';
import { httpProbe, kitBasic } from '../http-probe.js';
import { ROUTED } from '../world-plan.js';
import { ALLOWED, allowedOf, where } from './journal-views.js';

const UPLOAD = `git-upload-pack '${ROUTED.project}.git'`;

/** S9's judgement: the 3xx reached the router once, nobody asked the Location, and ssh failed. */
export function judgeNoRedirect(entries: JournalEntry[], result: ExecResult, status: number): Verdict {
  const allowed = allowedOf(entries);
  const owner = allowed.filter((e) => e.cell === ROUTED.cell && e.status === status);
  const followed = allowed.filter((e) => !(e.cell === ROUTED.cell && e.status === status));
  if (owner.length !== 1) return fail(`${status}: /allowed at ${where(allowed)}`);
  if (followed.length > 0) return fail(`${status} followed: /allowed also at ${where(followed)}`);
  if (result.code === 0) return fail(`${status}: ssh exited 0 after a redirect`);
  return pass();
}

export const S9: ConformanceCheck = {
  id: 'S9',
  title: 'a 301/302/307 on /allowed is an error, never followed',
  source: 'gitlab-shell!1497 (production#22364: POST→GET misroute)',
  needs: ['ssh'],
  async run(ctx) {
    const legacy = ctx.stack.cells.find((c) => c.name === ctx.legacyCell);
    for (const status of [301, 302, 307]) {
      const rails = ctx.control.rails(ROUTED.cell);
      await rails.fault(ALLOWED, { redirect: { status, location: `${legacy?.shellEndpoint}${ALLOWED}` } });
      try {
        const since = await ctx.cursor();
        const result = await ctx.ssh(UPLOAD);
        const verdict = judgeNoRedirect(await ctx.journalSince(since), result, status);
        if (verdict.kind === 'fail') return verdict;
      } finally {
        await rails.clearFaults();
      }
    }
    return pass();
  },
};

const REFUSAL = 'The conformance kit refuses this project';

export const S10: ConformanceCheck = {
  id: 'S10',
  title: "a 403/404 {message} on /allowed: the message on the user's stderr, exit 1",
  source: 'gitlab-shell internal/gitlabnet/accessverifier',
  needs: ['ssh'],
  async run(ctx) {
    for (const status of [403, 404]) {
      const rails = ctx.control.rails(ROUTED.cell);
      await rails.fault(ALLOWED, { status, body: { status: false, message: REFUSAL } });
      try {
        const r = await ctx.ssh(UPLOAD);
        if (!r.stderr.includes(REFUSAL) || r.code !== 1)
          return fail(`${status}: exit ${r.code}, stderr ${JSON.stringify(r.stderr.trim())}`);
      } finally {
        await rails.clearFaults();
      }
    }
    return pass();
  },
};

const MAINTENANCE = 'This organization is temporarily unavailable due to maintenance.';

export const S19: ConformanceCheck = {
  id: 'S19',
  title:
    "organization in time-bounded maintenance: the cell's 503 text on git's stderr; over --http 503 + Retry-After: 60",
  source: 'gitlab!251067 (organization_maintenance_enforcement)',
  needs: ['ssh'],
  async run(ctx) {
    const rails = ctx.control.rails(ROUTED.cell);
    await rails.maintenance(ROUTED.org, 'time-bounded');
    try {
      const since = await ctx.cursor();
      const r = await ctx.ssh(UPLOAD);
      const allowed = allowedOf(await ctx.journalSince(since));
      if (!allowed.some((e) => e.cell === ROUTED.cell && e.status === 503))
        return fail(`/allowed at ${where(allowed)} (want ${ROUTED.cell} 503)`);
      if (r.code === 0 || !r.stderr.includes(MAINTENANCE))
        return fail(`exit ${r.code}, stderr ${JSON.stringify(r.stderr.trim())}`);
      return ctx.router.http === undefined ? pass() : await maintenanceOverHttp(ctx);
    } finally {
      await rails.maintenance(ROUTED.org, 'off');
    }
  },
};

/** S19's HTTP half: git's info/refs through the HTTP front gets the cell's 503 and `Retry-After: 60`. */
async function maintenanceOverHttp(ctx: CheckContext): Promise<Verdict> {
  const a = await httpProbe(ctx, `/${ROUTED.project}.git/info/refs?service=git-upload-pack`, {
    headers: { authorization: kitBasic() },
  });
  const retryAfter = a.headers.get('retry-after');
  if (a.status !== 503 || retryAfter !== '60')
    return fail(
      `HTTP info/refs answered ${a.status}, Retry-After ${JSON.stringify(retryAfter)} (want 503, "60")`,
    );
  return pass();
}
