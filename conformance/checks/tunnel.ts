/**
 * @file Checks of the tunnel to the cell and of the session (reference-cell.md §5.1 S11, S15, S16,
 * S17).
 */
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, divergence, fail, pass, type Verdict } from '../check.js';
import { ROUTED } from '../world-plan.js';
import { tunnelsOf } from './journal-views.js';

const TUNNEL_PATH = `POST /${ROUTED.project}.git/ssh-upload-pack`;

/** S11's judgement of one clone's tunnel: path, Shell JWT with gl_id, Git-Protocol as git set it. */
export function judgeTunnel(entries: JournalEntry[], gitProtocol: string | undefined): Verdict {
  const tunnels = tunnelsOf(entries);
  const label = gitProtocol ? `GIT_PROTOCOL=${gitProtocol}` : 'no GIT_PROTOCOL';
  if (tunnels.length === 0) return fail(`${label}: no tunnel reached a bridge`);
  for (const t of tunnels) {
    const jwt = t.jwt?.['gitlab-shell-api-request'];
    const header = t.headers?.['git-protocol'];
    if (t.cell !== ROUTED.cell || t.endpoint !== TUNNEL_PATH)
      return fail(`${label}: tunnel ${t.endpoint} at ${t.cell} (want ${TUNNEL_PATH} at ${ROUTED.cell})`);
    if (typeof jwt?.gl_id !== 'string' || jwt.gl_id === '')
      return fail(`${label}: Shell JWT claims ${JSON.stringify(jwt ?? null)} have no gl_id`);
    if (header !== gitProtocol)
      return fail(
        `${label}: Git-Protocol header ${header === undefined ? 'absent' : JSON.stringify(header)}`,
      );
  }
  return pass();
}

export const S11: ConformanceCheck = {
  id: 'S11',
  title: 'tunnel: POST <project>.git/ssh-upload-pack, Shell JWT with gl_id, Git-Protocol only when set',
  source: 'gitlab-shell internal/command/shared/cells cells.go',
  needs: ['ssh'],
  async run(ctx) {
    for (const version of ['2', '0']) {
      const since = await ctx.cursor();
      const r = await ctx.git([
        '-c',
        `protocol.version=${version}`,
        'clone',
        '--quiet',
        ctx.url(`${ROUTED.project}.git`),
        ctx.scratch('s11'),
      ]);
      if (r.code !== 0) return fail(`clone (protocol ${version}) exited ${r.code}: ${r.stderr.trim()}`);
      const verdict = judgeTunnel(await ctx.journalSince(since), version === '2' ? 'version=2' : undefined);
      if (verdict.kind === 'fail') return verdict;
    }
    return pass();
  },
};

export const S15: ConformanceCheck = {
  id: 'S15',
  title: 'exit status 0 for a served command, 1 for a refused one, 128 for an unknown one',
  source: 'gitlab-shell internal/sshd/session.go',
  needs: ['ssh'],
  async run(ctx) {
    const seen = [
      // A flush-pkt after the advertisement: the client wants nothing, upload-pack ends cleanly.
      (await ctx.ssh(`git-upload-pack '${ROUTED.project}.git'`, {}, '0000')).code,
      (await ctx.ssh(`git-upload-pack 'north-group/no-such-project.git'`)).code,
      (await ctx.ssh('conformance-no-such-command')).code,
    ];
    return seen.join(',') === '0,1,128' ? pass() : fail(`exit statuses ${seen.join(', ')} (want 0, 1, 128)`);
  },
};

export const S16: ConformanceCheck = {
  id: 'S16',
  title: 'protocol v2 ls-refs and fetch work through the tunnel',
  source: 'gitlab-shell!1546',
  needs: ['ssh'],
  async run(ctx) {
    const url = ctx.url(`${ROUTED.project}.git`);
    const ls = await ctx.git(['-c', 'protocol.version=2', 'ls-remote', url], { GIT_TRACE_PACKET: '1' });
    if (ls.code !== 0 || !/version 2/.test(ls.stderr) || !/refs\/heads\//.test(ls.stdout))
      return fail(
        `ls-remote exited ${ls.code}; v2 ${/version 2/.test(ls.stderr)}; refs ${JSON.stringify(ls.stdout.slice(0, 120))}`,
      );
    const clone = await ctx.git(['-c', 'protocol.version=2', 'clone', '--quiet', url, ctx.scratch('s16')]);
    return clone.code === 0 ? pass() : fail(`v2 clone exited ${clone.code}: ${clone.stderr.trim()}`);
  },
};

export const S17: ConformanceCheck = {
  id: 'S17',
  title: 'git archive --remote of a project on another cell (gitlab-shell does not tunnel it)',
  source: 'gitlab-shell internal/command/uploadarchive/uploadarchive.go',
  needs: ['ssh'],
  async run(ctx) {
    const r = await ctx.git([
      'archive',
      `--remote=${ctx.url(`${ROUTED.project}.git`)}`,
      '--output',
      `${ctx.scratch('s17')}.tar`,
      'HEAD',
    ]);
    if (ctx.router.ours)
      return divergence(
        `our router tunnels upload-archive (exit ${r.code}); gitlab-shell dials the cell's Gitaly and fails`,
      );
    return r.code === 0
      ? divergence('archive succeeded: the router tunnels upload-archive, gitlab-shell does not')
      : divergence(`archive failed (exit ${r.code}), as gitlab-shell's does`);
  },
};
