/**
 * @file H4 (reference-cell.md §5.2): routable tokens behind an instance-wide token prefix. With
 * GitLab's `custom_prefix_for_all_token_types`, the admin's `instance_token_prefix` is put in front of
 * every token's own prefix (`acme-glrt-…`, lib/authn/token_field/prefix_helper.rb); the payload and
 * its length field are untouched and the CRC covers the whole prefix. A router either still routes
 * such a token by its payload, or — as GitLab's HTTP Router rules anchored on `^glrt-` / `^glpat-`
 * do — lets it fall back to the legacy cell like any unroutable token, which must then be documented
 * (a known divergence with that reason). Anything else (a refusal, another cell) is a FAIL.
 */
import { encodeRoutableToken } from '../../lib/routable-token.js';
import { type ConformanceCheck, divergence, fail, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import { cellsOf } from '../http-probe.js';
import { cellId, otherCell, probe } from './http-front.js';

export const INSTANCE_PREFIX = 'acme-';

/** Where one prefixed token's request went: `routed`, `legacy`, or the FAIL text. */
async function outcome(
  ctx: CheckContext,
  label: string,
  path: string,
  headers: Record<string, string>,
  owner: string,
): Promise<'routed' | 'legacy' | string> {
  const { answer, seen } = await probe(ctx, path, { method: 'POST', headers });
  if (seen.length === 1 && seen[0]?.cell === owner) return 'routed';
  if (seen.length === 1 && seen[0]?.cell === ctx.legacyCell) return 'legacy';
  return `${label}: answered ${answer.status}, Rails saw it at ${cellsOf(seen)} (want ${owner}, or the legacy cell ${ctx.legacyCell} if not routed)`;
}

export const H4: ConformanceCheck = {
  id: 'H4',
  title: `instance-wide token prefix (${INSTANCE_PREFIX}glrt-…, ${INSTANCE_PREFIX}glpat-…): still routed, or the legacy cell as documented`,
  source: 'gitlab lib/authn/token_field/prefix_helper.rb (custom_prefix_for_all_token_types)',
  needs: ['http'],
  async run(ctx) {
    const owner = otherCell(ctx);
    const id = cellId(ctx, owner);
    const results = [
      await outcome(
        ctx,
        'prefixed runner token',
        '/api/v4/runners/verify',
        { 'runner-token': encodeRoutableToken(`${INSTANCE_PREFIX}glrt-`, { c: id, o: 1 }) },
        owner,
      ),
      await outcome(
        ctx,
        'prefixed personal access token',
        '/api/v4/user',
        { 'private-token': encodeRoutableToken(`${INSTANCE_PREFIX}glpat-`, { c: id, o: 1, u: 1 }) },
        owner,
      ),
    ];
    return judgePrefixed(results);
  },
};

/** All routed: pass; any refused or misrouted: FAIL; otherwise the documented fallback. */
export function judgePrefixed(results: string[]): Verdict {
  const failed = results.find((r) => r !== 'routed' && r !== 'legacy');
  if (failed) return fail(failed);
  if (results.every((r) => r === 'routed')) return pass();
  return divergence(
    'tokens with an instance-wide prefix are not routed: they fall back to the legacy cell, as rules anchored on ^glrt- / ^glpat- (GitLab’s HTTP Router) do; documented in README "Conformance"',
  );
}
