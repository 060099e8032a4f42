/**
 * @file gitlab-shell's push shape since 14.57.4/14.57.6 (reference-cell.md §5.1 S13; README
 * "gitlab-shell release profiles"): a push is two receive-pack requests — request 1 a body of exactly
 * `0000`, request 2 opened only on the client's first byte (after a pre-push hook) — and each carries
 * a freshly signed Shell JWT. Judged from the bridges' journal (`stdin_tail`, `bytesIn`, `time`, `jwt`).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, fail, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import { ROUTED } from '../world-plan.js';

/** How long the kit's pre-push hook sleeps (request 2 must not open before it ends). */
export const HOOK_MS = 3000;

const pushes = (entries: JournalEntry[]) =>
  entries.filter((e) => e.service === 'bridge' && e.endpoint.endsWith('/ssh-receive-pack'));

/** S13-shape: two requests, the first exactly `0000`, the second opened after the hook. */
export function judgePushShape(entries: JournalEntry[], hookMs = HOOK_MS): Verdict {
  const reqs = pushes(entries);
  if (reqs.length !== 2)
    return fail(`${reqs.length} receive-pack request(s) for one push (want 2: a 0000 body, then the pack)`);
  const [first, second] = reqs as [JournalEntry, JournalEntry];
  const tail = first.fields?.stdin_tail;
  if (first.bytesIn !== 4 || tail !== '0000')
    return fail(`request 1 body: ${first.bytesIn} bytes ending ${JSON.stringify(tail)} (want exactly 0000)`);
  const gap = Date.parse(second.time) - (Date.parse(first.time) + first.durationMs);
  if (gap < hookMs * 0.8)
    return fail(
      `request 2 opened ${Math.round(gap)} ms after request 1 ended, before the ${hookMs} ms pre-push hook did (want: on the client's first byte)`,
    );
  return pass();
}

/** S13-jwt: every receive-pack request's Shell JWT was signed for it (iat within 1.5 s of its arrival). */
export function judgeFreshJwt(entries: JournalEntry[]): Verdict {
  const reqs = pushes(entries);
  if (reqs.length === 0) return fail('no receive-pack request reached a bridge');
  for (const [i, r] of reqs.entries()) {
    const iat = r.jwt?.['gitlab-shell-api-request']?.iat;
    if (typeof iat !== 'number') return fail(`request ${i + 1}: no Shell JWT iat`);
    const age = Date.parse(r.time) - iat * 1000;
    if (age > 1500)
      return fail(
        `request ${i + 1}: Shell JWT signed ${(age / 1000).toFixed(1)} s before the request (want a fresh one)`,
      );
  }
  return pass();
}

/**
 * Clones the routed project, commits, and pushes a new branch through a pre-push hook that sleeps
 * `hookMs`: the journal of the push, or what went wrong (git's exit and stderr).
 */
export async function pushThroughHook(
  ctx: CheckContext,
  tag: string,
  hookMs = HOOK_MS,
): Promise<JournalEntry[] | string> {
  const dir = ctx.scratch(tag);
  const clone = await ctx.git(['clone', '--quiet', ctx.url(`${ROUTED.project}.git`), dir]);
  if (clone.code !== 0) return `clone exited ${clone.code}: ${clone.stderr.trim()}`;
  const hooks = `${dir}-hooks`;
  mkdirSync(hooks, { recursive: true });
  writeFileSync(join(hooks, 'pre-push'), `#!/bin/sh\ncat >/dev/null\nsleep ${hookMs / 1000}\n`);
  chmodSync(join(hooks, 'pre-push'), 0o755);
  writeFileSync(join(dir, `${tag}.txt`), `${Date.now()}\n`);
  const id = ['-c', 'user.name=Kit', '-c', 'user.email=kit@example.com', '-c', `core.hooksPath=${hooks}`];
  for (const args of [
    ['add', '.'],
    ['commit', '--quiet', '-m', tag],
  ]) {
    const r = await ctx.git([...id, '-C', dir, ...args]);
    if (r.code !== 0) return `git ${args[0]} exited ${r.code}: ${r.stderr.trim()}`;
  }
  const since = await ctx.cursor();
  const branch = `kit-${tag}-${Date.now()}`;
  const push = await ctx.git(
    [...id, '-C', dir, 'push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`],
    {},
    hookMs + 60_000,
  );
  if (push.code !== 0) return `push exited ${push.code}: ${push.stderr.trim()}`;
  return ctx.journalSince(since);
}

function pushCheck(id: string, title: string, source: string, judge: (e: JournalEntry[]) => Verdict) {
  const check: ConformanceCheck = {
    id,
    title,
    source,
    needs: ['ssh'],
    async run(ctx) {
      const entries = await pushThroughHook(ctx, id.toLowerCase());
      return typeof entries === 'string' ? fail(entries) : judge(entries);
    },
  };
  return check;
}

export const S13_SHAPE = pushCheck(
  'S13-shape',
  'push through a 3 s pre-push hook: two receive-pack requests, the first exactly 0000, the second on the first byte',
  'gitlab-shell!1561 (14.57.4)',
  (e) => judgePushShape(e),
);

export const S13_JWT = pushCheck(
  'S13-jwt',
  'push through a 3 s pre-push hook: every tunnel request carries a freshly signed Shell JWT',
  'gitlab-shell!1570 (14.57.6)',
  judgeFreshJwt,
);
