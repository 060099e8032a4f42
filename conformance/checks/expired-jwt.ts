/**
 * @file S14 (reference-cell.md §5.1): a Shell JWT the cell finds expired on `ssh-*-pack`. The kit
 * runs the world's bridges 180 s ahead (`world clockSkew` on `bridge` only; the bridge judges expiry
 * by its own clock), so every router's fresh token is expired there while `/allowed` still passes.
 */
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, fail, pass, type Verdict } from '../check.js';
import type { ExecResult } from '../exec.js';
import { ROUTED } from '../world-plan.js';
import { tunnelsOf } from './journal-views.js';

export const BRIDGE_SKEW_MS = 180_000;

/** The cell answered 404 to the tunnel; the user read "Not found"; ssh exited 1. */
export function judgeExpiredJwt(entries: JournalEntry[], result: ExecResult): Verdict {
  const tunnels = tunnelsOf(entries);
  if (!tunnels.some((t) => t.status === 404))
    return fail(`tunnel answers ${tunnels.map((t) => t.status).join(', ') || 'none'} (want the cell's 404)`);
  if (result.code !== 1 || !result.stderr.includes('Not found'))
    return fail(
      `exit ${result.code}, stderr ${JSON.stringify(result.stderr.trim())} (want "… Not found", exit 1)`,
    );
  return pass();
}

export const S14: ConformanceCheck = {
  id: 'S14',
  title: 'an expired Shell JWT on ssh-upload-pack: the cell\'s 404, "… Not found" on stderr, exit 1',
  source: 'gitlab-shell!1570 (gitlab!257493)',
  needs: ['ssh'],
  async run(ctx) {
    await ctx.control.clock.skew(BRIDGE_SKEW_MS, 'bridge');
    try {
      const since = await ctx.cursor();
      const result = await ctx.ssh(`git-upload-pack '${ROUTED.project}.git'`);
      return judgeExpiredJwt(await ctx.journalSince(since), result);
    } finally {
      await ctx.control.clock.skew(0, 'bridge');
    }
  },
};
