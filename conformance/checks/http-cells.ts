/**
 * @file Checks of the HTTP front against the cells and the Topology Service (reference-cell.md
 * §5.2 H8, H9, H10, H12): degradation to the legacy cell, two-step sign-in, git and LFS over HTTP,
 * and no reliance on `421` / `X-Gitlab-Cell-*`.
 */
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
import { cellsOf, gitHttp, gitHttpUrl, kitBasic } from '../http-probe.js';
import { KIT_USER, ROUTED } from '../world-plan.js';
import { cellId, otherCell, probe, sessionCookie } from './http-front.js';

export const H8: ConformanceCheck = {
  id: 'H8',
  title:
    'Topology Service UNAVAILABLE or UNAUTHENTICATED: the legacy cell (a private project elsewhere: 404)',
  source: 'cells runbooks (HTTP router fallback); reference-cell.md H8',
  needs: ['http'],
  async run(ctx) {
    const verdicts: Verdict[] = [];
    for (const code of ['UNAVAILABLE', 'UNAUTHENTICATED'] as const) {
      await ctx.control.topologyService.failNext(1000, code);
      try {
        const project = await probe(ctx, `/${ROUTED.project}`);
        const cookie = await probe(ctx, '/', {
          headers: { cookie: sessionCookie(cellId(ctx, otherCell(ctx))) },
        });
        for (const [label, p] of [
          [`/${ROUTED.project}`, project],
          ['/ with a session cookie', cookie],
        ] as const) {
          const at = p.seen.map((e) => e.cell);
          verdicts.push(
            at.length === 1 && at[0] === ctx.legacyCell && p.answer.status < 500
              ? pass()
              : fail(
                  `${code}: ${label} answered ${p.answer.status}; Rails saw it at ${cellsOf(p.seen)} (want ${ctx.legacyCell})`,
                ),
          );
        }
      } finally {
        await ctx.control.topologyService.reset();
      }
    }
    return firstFailure(verdicts);
  },
};

export const H9: ConformanceCheck = {
  id: 'H9',
  title:
    "two-step sign-in: /users/sign_in_path?login= on the legacy cell, /users/sign_in?login=u on u's cell",
  source: 'gitlab!219667; gitlab doc/development/cells/testing',
  needs: ['http'],
  async run(ctx) {
    const first = await probe(ctx, `/users/sign_in_path?login=${KIT_USER}`, {
      headers: { accept: 'application/json' },
    });
    const body = jsonOf(first.answer.text);
    if (first.answer.status !== 200 || body === undefined || !('sign_in_path' in body))
      return notRun(
        `the kit world has no two-step sign-in (/users/sign_in_path answered ${first.answer.status} without {sign_in_path})`,
      );
    if (first.seen.length !== 1 || first.seen[0]?.cell !== ctx.legacyCell)
      return fail(`/users/sign_in_path: Rails saw it at ${cellsOf(first.seen)} (want ${ctx.legacyCell})`);
    const next = body.sign_in_path;
    if (typeof next !== 'string')
      return fail(`the legacy cell answered sign_in_path ${JSON.stringify(next)}`);
    const second = await probe(ctx, next);
    return second.seen.length === 1 && second.seen[0]?.cell === ROUTED.cell
      ? pass()
      : fail(`${next}: Rails saw it at ${cellsOf(second.seen)} (want ${KIT_USER}'s cell ${ROUTED.cell})`);
  },
};

function jsonOf(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function lfsBatch(ctx: CheckContext): Promise<Verdict> {
  const path = `/${ROUTED.project}.git/info/lfs/objects/batch`;
  const { answer, seen } = await probe(ctx, path, {
    method: 'POST',
    headers: {
      authorization: kitBasic(),
      'content-type': 'application/vnd.git-lfs+json',
      accept: 'application/vnd.git-lfs+json',
    },
    body: JSON.stringify({ operation: 'download', objects: [{ oid: '0'.repeat(64), size: 1 }] }),
  });
  return answer.status === 200 && seen.length >= 1 && seen.every((e) => e.cell === ROUTED.cell)
    ? pass()
    : fail(`LFS batch answered ${answer.status}; Rails saw it at ${cellsOf(seen)} (want ${ROUTED.cell})`);
}

export const H10: ConformanceCheck = {
  id: 'H10',
  title: "git over HTTP: clone and push through the front reach the owning cell's bridge; LFS batch too",
  source: 'charts v10.1.2 (">15s clones fail with curl 18"); reference-cell.md H10',
  needs: ['http'],
  async run(ctx) {
    const dir = ctx.scratch('h10');
    const since = await ctx.cursor();
    const clone = await gitHttp(ctx, ['clone', '--quiet', gitHttpUrl(ctx, `${ROUTED.project}.git`), dir]);
    if (clone.code !== 0) return fail(`clone over HTTP exited ${clone.code}: ${clone.stderr.trim()}`);
    const branch = `conformance-h10-${Date.now()}`;
    const push = await gitHttp(ctx, ['-C', dir, 'push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`]);
    if (push.code !== 0) return fail(`push over HTTP exited ${push.code}: ${push.stderr.trim()}`);
    await gitHttp(ctx, ['-C', dir, 'push', '--quiet', 'origin', `:refs/heads/${branch}`]);
    const git = (await ctx.journalSince(since)).filter(
      (e) => e.service === 'bridge' && /\/(info\/refs|git-upload-pack|git-receive-pack)$/.test(e.endpoint),
    );
    if (git.length < 4 || git.some((e) => e.cell !== ROUTED.cell))
      return fail(`git over HTTP at the bridges: ${cellsOf(git)} (want ${ROUTED.cell})`);
    return lfsBatch(ctx);
  },
};

export const H12: ConformanceCheck = {
  id: 'H12',
  title: 'no 421 and no X-Gitlab-Cell-* header is needed: the kit world emits neither, and routing works',
  source: 'topology-service.md §4 (no GitLab component emits or consumes them)',
  needs: ['http'],
  async run(ctx) {
    const project = await probe(ctx, `/${ROUTED.project}`, { headers: { authorization: kitBasic() } });
    const cellHeaders = [...project.answer.headers.keys()].filter((h) => h.startsWith('x-gitlab-cell'));
    const verdict = firstFailure([
      project.seen.length === 1 && project.seen[0]?.cell === ROUTED.cell
        ? pass()
        : fail(`/${ROUTED.project}: Rails saw it at ${cellsOf(project.seen)} (want ${ROUTED.cell})`),
      project.answer.status === 421 || cellHeaders.length > 0
        ? fail(`the answer was ${project.answer.status} with ${JSON.stringify(cellHeaders)}`)
        : pass(),
    ]);
    if (verdict.kind === 'pass' && ctx.router.ours)
      return divergence(
        'passes; our router in learn mode follows 421 + X-Gitlab-Cell-Redirect (seed000Routing worlds only)',
      );
    return verdict;
  },
};
