/**
 * @file S13-lfs (reference-cell.md §1.5, §5.1 S13; gitlab!257493, gitlab-shell!1570): a push over SSH
 * whose pre-push hook uploads an LFS object (Debian's git-lfs, its own `git lfs pre-push`, to
 * `git-lfs-authenticate`'s href: the world's public HTTP front) and then stays in the hook until the
 * Shell JWT of the push's first request is dead by Rails' rules (`exp` + 60 s of leeway). gitlab-shell
 * 14.57.4 reused that token for request 2 and the user read "cells routing: receive-pack response: Not
 * found"; 14.57.6 signs one per request. A long case whatever the edge: the wait is the router's TTL
 * (`exp - iat`, read from the journal) plus the leeway, ~67 s in the kit's world (routers'
 * `shellJwtTtlSeconds` 5), ~2 min against gitlab-shell's 60 s.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StackJson } from '../../lib/contracts/stack.js';
import type { JournalEntry } from '../../lib/contracts/world.js';
import { SHELL_LEEWAY_SECONDS, SHELL_TTL_SECONDS } from '../../lib/jwt.js';
import { type ConformanceCheck, fail, pass, type Verdict } from '../check.js';
import type { CheckContext, RouterUnderTest } from '../context.js';
import type { ExecResult } from '../exec.js';
import { ROUTED } from '../world-plan.js';
import { where } from './journal-views.js';

/** How long past the moment request 1's token is dead the hook stays (the verifier counts whole seconds). */
const PAST_DEAD_MS = 1500;
const LEEWAY_MS = SHELL_LEEWAY_SECONDS * 1000;
const LFS_BYTES = 256 * 1024;
const ID = ['-c', 'user.name=Kit', '-c', 'user.email=kit@example.com'];
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The Shell JWT TTL of the router under test: the world's router it is (stack.json), else gitlab-shell's 60 s. */
export function routerJwtTtlMs(stack: StackJson, router: RouterUnderTest): number {
  const own = [stack.router, stack.routerTopology].find((r) => r?.ssh === router.ssh);
  return (own?.shellJwtTtlSeconds ?? SHELL_TTL_SECONDS) * 1000;
}

const receivePacks = (entries: JournalEntry[]) =>
  entries.filter((e) => e.service === 'bridge' && e.endpoint.endsWith('/ssh-receive-pack'));

/** When a request's Shell JWT is dead by Rails' rules: `exp` plus the leeway (ms since the epoch). */
const deadOf = (e: JournalEntry | undefined) => {
  const exp = e?.jwt?.['gitlab-shell-api-request']?.exp;
  return typeof exp === 'number' ? exp * 1000 + LEEWAY_MS : undefined;
};

/** A clone of the routed project with LFS tracking `*.bin` and one committed object; or what failed. */
async function lfsCommit(ctx: CheckContext, dir: string): Promise<string | undefined> {
  const clone = await ctx.git(['clone', '--quiet', ctx.url(`${ROUTED.project}.git`), dir]);
  if (clone.code !== 0) return `clone exited ${clone.code}: ${clone.stderr.trim()}`;
  const steps: Array<[string[], () => void]> = [
    [['lfs', 'install', '--local', '--skip-repo'], () => undefined],
    [['lfs', 'track', '*.bin'], () => writeFileSync(join(dir, 's13-lfs.bin'), randomBytes(LFS_BYTES))],
    [['add', '.gitattributes', 's13-lfs.bin'], () => undefined],
    [['commit', '--quiet', '-m', 'S13-lfs'], () => undefined],
  ];
  for (const [args, after] of steps) {
    const r = await ctx.git([...ID, '-C', dir, ...args]);
    if (r.code !== 0) return `git ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`;
    after();
  }
  return undefined;
}

/** git-lfs's own pre-push (the upload), then a wait for `go`; `started` marks the upload's end. */
function writeHook(hooks: string): { started: string; go: string } {
  mkdirSync(hooks, { recursive: true });
  const started = join(hooks, 'lfs-uploaded');
  const go = join(hooks, 'go');
  const hook = [
    '#!/bin/sh',
    'git lfs pre-push "$@" || exit 1',
    `: > '${started}'`,
    `while [ ! -e '${go}' ]; do sleep 0.1; done`,
    '',
  ].join('\n');
  writeFileSync(join(hooks, 'pre-push'), hook);
  chmodSync(join(hooks, 'pre-push'), 0o755);
  return { started, go };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Holds the hook until request 1's Shell JWT (from the journal) is dead, or, with no request 1
 * journaled (one request per push), the router's TTL and the leeway after the upload. When it died.
 */
async function holdHook(
  ctx: CheckContext,
  files: { started: string; go: string },
  since: number,
  ttlMs: number,
  done: () => boolean,
): Promise<number | undefined> {
  while (!existsSync(files.started) && !done()) await sleep(100);
  if (done()) return undefined;
  const dead = deadOf(receivePacks(await ctx.journalSince(since))[0]);
  await sleep(Math.max(0, (dead ?? Date.now() + ttlMs + LEEWAY_MS) + PAST_DEAD_MS - Date.now()));
  writeFileSync(files.go, '');
  return dead;
}

/**
 * The push succeeded; the object reached the owning cell's bridge; the ref moved there (Rails'
 * `post_receive` with the branch in its `changes`); the pack's request came after request 1's token died.
 */
export function judgeLfsPush(
  entries: JournalEntry[],
  push: ExecResult,
  dead: number | undefined,
  branch: string,
): Verdict {
  const text = push.stderr
    .split('\n')
    .filter((l) => !/^remote:\s*(=*)\s*$/.test(l) && l.trim() !== '')
    .join(' | ');
  // null: killed by a signal (SIGPIPE writing the pack to a connection the edge had closed).
  const how = push.code === null ? 'was killed by a signal' : `exited ${push.code}`;
  if (push.code !== 0) return fail(`push ${how}: ${text || '(nothing on stderr)'}`);
  const uploads = entries.filter((e) => e.service === 'bridge' && /\/gitlab-lfs\/objects\//.test(e.endpoint));
  if (!uploads.some((e) => e.cell === ROUTED.cell && Number(e.status) < 300))
    return fail(`no LFS upload reached ${ROUTED.cell}'s bridge (seen: ${where(uploads)})`);
  const moved = entries.filter(
    (e) =>
      e.service === 'rails' &&
      e.endpoint.endsWith('/internal/post_receive') &&
      String(e.fields?.changes ?? '').includes(`refs/heads/${branch}`),
  );
  if (!moved.some((e) => e.cell === ROUTED.cell))
    return fail(`post_receive of refs/heads/${branch} at ${where(moved)} (want ${ROUTED.cell})`);
  const last = receivePacks(entries).at(-1);
  if (dead !== undefined && last && Date.parse(last.time) < dead)
    return fail(
      `request 2 reached the cell ${secs(dead - Date.parse(last.time))} before request 1's Shell JWT was dead (exp + 60 s)`,
    );
  return pass();
}

async function lfsPush(ctx: CheckContext): Promise<Verdict> {
  const dir = ctx.scratch('s13-lfs');
  const failed = await lfsCommit(ctx, dir);
  if (failed) return fail(failed);
  const hooks = `${dir}-hooks`;
  const files = writeHook(hooks);
  const ttlMs = routerJwtTtlMs(ctx.stack, ctx.router);
  const since = await ctx.cursor();
  const branch = `kit-s13-lfs-${Date.now()}`;
  let finished = false;
  const pushing = ctx
    .git(
      [...ID, '-c', `core.hooksPath=${hooks}`, '-C', dir, 'push', 'origin', `HEAD:refs/heads/${branch}`],
      {},
      ttlMs + LEEWAY_MS + 120_000,
    )
    .finally(() => {
      finished = true;
    });
  const dead = await holdHook(ctx, files, since, ttlMs, () => finished);
  const push = await pushing;
  return judgeLfsPush(await ctx.journalSince(since), push, dead, branch);
}

export const S13_LFS: ConformanceCheck = {
  id: 'S13-lfs',
  title:
    "push whose pre-push hook uploads an LFS object and outlasts request 1's Shell JWT: succeeds, the object and the ref on the owning cell",
  source: 'gitlab!257493, gitlab-shell!1570 (14.57.6)',
  needs: ['ssh', 'http'],
  long: true,
  waitMs: (stack, router) => routerJwtTtlMs(stack, router) + LEEWAY_MS + PAST_DEAD_MS,
  run: lfsPush,
};
