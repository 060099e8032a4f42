/**
 * @file Checks of the SSH front beyond the tunnel (reference-cell.md §5.1 S3, S7, S18): where key
 * sessions' account commands go, degradation when the Topology Service fails, and LFS over SSH
 * crossing the HTTP front.
 */
import type { JournalEntry } from '../../lib/contracts/world.js';
import {
  type ConformanceCheck,
  divergence,
  fail,
  firstFailure,
  notRun,
  pass,
  type Verdict,
} from '../check.js';
import type { CheckContext } from '../context.js';
import { httpProbe } from '../http-probe.js';
import { LEGACY_PROJECT, ROUTED } from '../world-plan.js';
import { allowedOf, claimOf, isClassify, tunnelsOf, where } from './journal-views.js';

const INTERNAL = '/api/v4/internal';

/** The account commands of a key session and the internal endpoint each calls. */
const ACCOUNT: Array<[command: string, input: string, endpoint: string]> = [
  ['', '', `${INTERNAL}/discover`],
  ['personal_access_token conformance-s3 read_repository 1', '', `${INTERNAL}/personal_access_token`],
  ['2fa_recovery_codes', 'yes\n', `${INTERNAL}/two_factor_recovery_codes`],
];

/** S3's judgement of one command: its Rails call at the legacy cell, no claim but the key's. */
export function judgeKeySession(entries: JournalEntry[], endpoint: string, legacy: string): Verdict {
  const calls = entries.filter((e) => e.service === 'rails' && e.endpoint === endpoint);
  const claims = entries
    .filter(isClassify)
    .map(claimOf)
    .filter((c) => c !== undefined && c.type !== 'ssh_key_fingerprint');
  if (calls.length === 0) return fail(`${endpoint}: no Rails call`);
  if (calls.some((e) => e.cell !== legacy))
    return fail(`${endpoint} at ${where(calls)} (want the default cell ${legacy})`);
  if (claims.length > 0) return fail(`${endpoint}: Classify of ${JSON.stringify(claims)} (want none)`);
  return pass();
}

export const S3: ConformanceCheck = {
  id: 'S3',
  title: 'key auth: discover, personal_access_token and 2fa_recovery_codes go to the default cell, no claim',
  source: 'gitlab-shell internal/topology resolver.go (ClientForUserArgs, resolveByUserArgs)',
  needs: ['ssh'],
  async run(ctx) {
    const verdicts: Verdict[] = [];
    for (const [command, input, endpoint] of ACCOUNT) {
      const since = await ctx.cursor();
      await ctx.ssh(command, {}, input);
      verdicts.push(judgeKeySession(await ctx.journalSince(since), endpoint, ctx.legacyCell));
    }
    const verdict = firstFailure(verdicts);
    if (verdict.kind === 'fail' && ctx.router.ours)
      return divergence(
        `our router sends a key session's account commands to the user's cell (route=<username>): ${verdict.seen}`,
      );
    return verdict;
  },
};

export const S3cert: ConformanceCheck = {
  id: 'S3-cert',
  title: 'certificate auth: discover, personal_access_token and 2FA classify the username claim',
  source: 'gitlab-shell internal/topology resolver.go (ClientForUserArgs)',
  needs: ['ssh'],
  async run(ctx) {
    return notRun(
      ctx.router.ours
        ? 'our router sends no username claim, and the kit world configures no trusted user CA'
        : 'the kit world configures no trusted user CA (trusted_user_ca_keys), so no certificate login',
    );
  },
};

/** Clones the legacy cell's project with every Classify failing `code`. */
async function degradedClone(ctx: CheckContext, code: 'UNAVAILABLE' | 'DEADLINE_EXCEEDED'): Promise<Verdict> {
  await ctx.control.topologyService.failNext(1000, code);
  try {
    const since = await ctx.cursor();
    const r = await ctx.git([
      'clone',
      '--quiet',
      ctx.url(`${LEGACY_PROJECT}.git`),
      ctx.scratch(`s7-${code}`),
    ]);
    const entries = await ctx.journalSince(since);
    const allowed = allowedOf(entries);
    const tunnels = tunnelsOf(entries);
    if (r.code !== 0) return fail(`${code}: clone exited ${r.code}: ${r.stderr.trim()}`);
    if (r.stderr.trim() !== '') return fail(`${code}: the user saw ${JSON.stringify(r.stderr.trim())}`);
    if (allowed.length === 0 || [...allowed, ...tunnels].some((e) => e.cell !== ctx.legacyCell))
      return fail(`${code}: /allowed at ${where(allowed)}, tunnel at ${where(tunnels)}`);
    return pass();
  } finally {
    await ctx.control.topologyService.reset();
  }
}

export const S7: ConformanceCheck = {
  id: 'S7',
  title: 'Topology Service down or timing out: the legacy cell, the clone works, nothing on stderr',
  source: 'gitlab-shell internal/topology resolver.go (fall back to gitlab_url)',
  needs: ['ssh'],
  async run(ctx) {
    return firstFailure([
      await degradedClone(ctx, 'UNAVAILABLE'),
      await degradedClone(ctx, 'DEADLINE_EXCEEDED'),
    ]);
  },
};

interface LfsAuth {
  href?: unknown;
  header?: { Authorization?: unknown };
}

export const S18: ConformanceCheck = {
  id: 'S18',
  title:
    'LFS over SSH: the href is the public HTTP URL; its batch call through the HTTP front lands on the same cell',
  source: 'gitlab-shell internal/command/lfsauthenticate (href from Rails), reference-cell.md S18',
  needs: ['ssh', 'http'],
  async run(ctx) {
    const r = await ctx.ssh(`git-lfs-authenticate ${ROUTED.project}.git download`);
    if (r.code !== 0) return fail(`git-lfs-authenticate exited ${r.code}: ${r.stderr.trim()}`);
    const auth = JSON.parse(r.stdout) as LfsAuth;
    const href = new URL(String(auth.href));
    const publicUrl = new URL(ctx.stack.router.http);
    const path = `/${ROUTED.project}.git/info/lfs`;
    if (href.origin !== publicUrl.origin || href.pathname !== path)
      return fail(`href ${String(auth.href)} (want ${publicUrl.origin}${path})`);
    const since = await ctx.cursor();
    const batch = await httpProbe(ctx, `${path}/objects/batch`, {
      method: 'POST',
      headers: {
        authorization: String(auth.header?.Authorization),
        'content-type': 'application/vnd.git-lfs+json',
        accept: 'application/vnd.git-lfs+json',
      },
      body: JSON.stringify({ operation: 'download', objects: [{ oid: '0'.repeat(64), size: 1 }] }),
    });
    const seen = (await ctx.journalSince(since)).filter(
      (e) => e.service === 'rails' && e.endpoint.endsWith('/info/lfs/objects/batch'),
    );
    if (batch.status !== 200 || seen.length === 0 || seen.some((e) => e.cell !== ROUTED.cell))
      return fail(`batch answered ${batch.status}; Rails saw it at ${where(seen)} (want ${ROUTED.cell})`);
    return pass();
  },
};
