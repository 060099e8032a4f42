/**
 * @file The kit's long edge cases (reference-cell.md §1.5, §5.1 S12, S13): what broke GitLab's
 * rollouts behind the public edge, run through the world's real edge (`--edge`, README "Edges").
 * Each needs an edge with an idle timeout (with `none`: not run, never pass) and takes about the
 * edge's timeouts (`long`: see `conformance/long-cases.ts`). S12-shape judges the same body shape
 * from the journal alone, on any edge.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { StackJson } from '../../lib/contracts/stack.js';
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, fail, notRun, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import { slowSshCommand } from '../slow-reader.js';
import { ROUTED } from '../world-plan.js';
import { tunnelsOf } from './journal-views.js';
import { pushThroughHook } from './push-shape.js';

export type EdgeTimes = NonNullable<StackJson['edge']['figures']>;

/** The figures of the world's edge, or undefined when it runs none. */
export function edgeTimes(stack: StackJson): EdgeTimes | undefined {
  return stack.edge?.kind === 'none' ? undefined : stack.edge?.figures;
}

export const NEEDS_EDGE = 'needs an edge with an idle timeout (--edge nginx, haproxy, cloudflare or a file)';

const MiB = 1024 * 1024;
/** What the pipes between the edge and a slow git hold (socket buffers, OpenSSH's 2 MiB window): ~8 MiB measured. */
const IN_PIPES = 10 * MiB;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const uploadPacks = (entries: JournalEntry[]) =>
  tunnelsOf(entries).filter((e) => e.endpoint.endsWith('/ssh-upload-pack'));

/** The upload-pack body ended after the client's `done`, a flush-pkt added (14.57.3+). */
export function judgeBodyClosed(entries: JournalEntry[]): Verdict {
  const reqs = uploadPacks(entries);
  const last = reqs[reqs.length - 1];
  if (!last) return fail('no ssh-upload-pack request reached a bridge');
  const tail = String(last.fields?.stdin_tail ?? '');
  const end = last.fields?.body_end;
  if (end !== 'before-exit' || !tail.endsWith('done\n0000'))
    return fail(
      `upload-pack body ${end === 'before-exit' ? 'ended' : 'still open when the answer ended'}, ending ${JSON.stringify(tail)} (want: ended after done with a flush-pkt added, …done\\n0000)`,
    );
  return pass();
}

/**
 * Pack size and reader rate that keep the edge streaming 1.3× its idle-body timeout after `done`:
 * at most 16 MiB at the reader's rate, 256 KiB/s to 3 MiB/s (faster readers stall the router's
 * pipes in bursts on 2 cores; slower ones need no more), plus what the pipes hold.
 */
export function slowClonePlan(idleBodyMs: number): { bytes: number; rate: number } {
  const active = (1.3 * idleBodyMs) / 1000;
  const rate = Math.max(256 * 1024, Math.min(3 * MiB, Math.floor((16 * MiB) / active)));
  return { bytes: Math.ceil(rate * active) + IN_PIPES, rate };
}

/** `files` files of random data, `bytes` in all. */
function writeRandom(dir: string, bytes: number, files: number): void {
  const each = Math.ceil(bytes / files);
  for (let i = 0; i < files; i++) {
    const fd = openSync(join(dir, `big-${i}.bin`), 'w');
    try {
      for (let left = each; left > 0; left -= MiB) writeSync(fd, randomBytes(Math.min(MiB, left)));
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Stored, not deflated (random data does not compress), in more objects than receive-pack unpacks
 * (`receive.unpackLimit` 100): the cell keeps the pack as sent and serves it again without work, so
 * neither the seeding push nor the clone's pack idles past a short edge timeout.
 */
const SEED = [
  '-c',
  'pack.window=0',
  '-c',
  'core.compression=0',
  '-c',
  'pack.compression=0',
  '-c',
  'user.name=Kit',
  '-c',
  'user.email=kit@example.com',
];
const SEED_FILES = 128;

/**
 * Writes a branch holding `bytes` of random data straight into the project's repository (stack.json
 * `projects[].repository`): through a short-scaled edge a push of tens of MiB idles past it itself.
 * Its name, or what went wrong.
 */
async function seedBigBranch(ctx: CheckContext, dir: string, bytes: number): Promise<string | Verdict> {
  const repo = ctx.stack.projects.find((p) => p.path === ROUTED.project)?.repository;
  if (!repo) return fail(`seeding: stack.json has no repository for ${ROUTED.project}`);
  mkdirSync(dir, { recursive: true });
  writeRandom(dir, bytes, SEED_FILES);
  const branch = `kit-s12-${Date.now()}`;
  for (const args of [
    ['init', '--quiet'],
    ['add', '.'],
    ['commit', '--quiet', '-m', 'S12'],
    ['push', '--quiet', repo, `HEAD:refs/heads/${branch}`],
  ]) {
    const r = await ctx.git([...SEED, '-C', dir, ...args], {}, 180_000);
    if (r.code !== 0) return fail(`seeding: git ${args[0]} exited ${r.code}: ${r.stderr.trim()}`);
  }
  return branch;
}

/** S12: a clone whose pack outlasts the edge's idle-body timeout while the client reads slowly. */
async function idleBodyClone(ctx: CheckContext): Promise<Verdict> {
  const f = edgeTimes(ctx.stack);
  if (!f) return notRun(NEEDS_EDGE);
  const { bytes, rate } = slowClonePlan(f.idleBodyTimeoutMs);
  const seed = ctx.scratch('s12-seed');
  const branch = await seedBigBranch(ctx, seed, bytes);
  if (typeof branch !== 'string') return branch;
  try {
    const tools = ctx.scratch('s12-tools');
    mkdirSync(tools, { recursive: true });
    // git passes `-p` only to a command it knows is OpenSSH.
    const env = { GIT_SSH_COMMAND: slowSshCommand(tools, ctx.sshCommand, rate), GIT_SSH_VARIANT: 'ssh' };
    const url = ctx.url(`${ROUTED.project}.git`);
    const since = await ctx.cursor();
    const started = Date.now();
    const args = [
      '-c',
      'protocol.version=0',
      'clone',
      '--quiet',
      '--single-branch',
      '--branch',
      branch,
      '--no-tags',
      url,
      ctx.scratch('s12'),
    ];
    const clone = await ctx.git(args, env, Math.ceil((bytes / rate) * 2000) + 120_000);
    const took = Date.now() - started;
    if (clone.code !== 0)
      return fail(
        `clone of ${bytes >> 20} MiB read at ${(rate / MiB).toFixed(2)} MiB/s exited ${clone.code} after ${secs(took)} (edge idle body ${secs(f.idleBodyTimeoutMs)}): ${lastLines(clone.stderr)}`,
      );
    if (took < f.idleBodyTimeoutMs)
      return notRun(
        `the clone took ${secs(took)}, not past the edge's idle body ${secs(f.idleBodyTimeoutMs)}`,
      );
    return judgeBodyClosed(await ctx.journalSince(since));
  } finally {
    const repo = ctx.stack.projects.find((p) => p.path === ROUTED.project)?.repository ?? '';
    await ctx.git(['-C', seed, 'push', '--quiet', repo, '--delete', branch], {}, 60_000);
  }
}

const lastLines = (text: string) => text.trim().split('\n').slice(-3).join(' | ') || '(nothing on stderr)';

export const S12: ConformanceCheck = {
  id: 'S12',
  title:
    "clone whose pack streams past the edge's idle-body timeout (a slow reader): succeeds, the body ended after negotiation",
  source: 'gitlab-shell!1546 (14.57.3)',
  needs: ['ssh'],
  long: true,
  run: idleBodyClone,
};

export const S12_SHAPE: ConformanceCheck = {
  id: 'S12-shape',
  title: 'protocol v0 clone: the upload-pack body ended after done, a flush-pkt added (stdin_tail, body_end)',
  source: 'gitlab-shell!1546 (14.57.3)',
  needs: ['ssh'],
  async run(ctx) {
    const since = await ctx.cursor();
    const url = ctx.url(`${ROUTED.project}.git`);
    const clone = await ctx.git([
      '-c',
      'protocol.version=0',
      'clone',
      '--quiet',
      url,
      ctx.scratch('s12-shape'),
    ]);
    if (clone.code !== 0) return fail(`clone exited ${clone.code}: ${clone.stderr.trim()}`);
    return judgeBodyClosed(await ctx.journalSince(since));
  },
};

export const S13_LONG: ConformanceCheck = {
  id: 'S13-long',
  title: "push through a pre-push hook of twice the edge's idle-connection timeout: succeeds",
  source: 'gitlab-shell!1561 (14.57.4)',
  needs: ['ssh'],
  long: true,
  async run(ctx) {
    const f = edgeTimes(ctx.stack);
    if (!f) return notRun(NEEDS_EDGE);
    const hookMs = 2 * f.idleTimeoutMs;
    const started = Date.now();
    const entries = await pushThroughHook(ctx, 's13-long', hookMs);
    if (typeof entries !== 'string') return pass();
    return fail(
      `${entries.split('\n').slice(0, 4).join(' | ')} (after ${secs(Date.now() - started)}; hook ${secs(hookMs)}, edge idle ${secs(f.idleTimeoutMs)})`,
    );
  },
};
