/**
 * @file S20 (reference-cell.md §5.1; production#22944, k8s-workloads!5877): the edge streams the
 * request bodies of `*\/ssh-upload-pack` and `*\/ssh-receive-pack`. Through an edge that buffers
 * them whole, the cell sees nothing until the body ends, and since the cell speaks first an SSH clone
 * deadlocks. The kit runs `git-upload-pack` and `git-receive-pack` over ssh with stdin held open:
 * the cell's first bytes (the advertisement) must come while it is open; for a push's second request
 * (14.57.4+) the journal must show it reached the cell before its body ended.
 */
import { spawn } from 'node:child_process';
import type { JournalEntry } from '../../lib/contracts/world.js';
import { type ConformanceCheck, fail, firstFailure, notRun, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import { ROUTED } from '../world-plan.js';
import { edgeTimes, NEEDS_EDGE } from './edge-long.js';
import { tunnelsOf } from './journal-views.js';

/** How long the kit waits for the cell's first byte while the body is open. */
export const FIRST_BYTE_MS = 5_000;
/** How long a push's second body stays open after its first bytes. */
const HELD_MS = 1_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface HeldSession {
  /** When the first byte of stdout came (undefined: none within FIRST_BYTE_MS, or closed first). */
  firstByteAt?: number;
  /** When stdin was ended. */
  endedAt: number;
  stderr: string;
}

/** `ssh git@router <command>` with stdin open until the first answer byte, then `input` and the end. */
function heldSession(
  ctx: CheckContext,
  command: string,
  input: (write: (s: string) => void) => Promise<void>,
) {
  const m = /^(.*):(\d+)$/.exec(ctx.router.ssh ?? '');
  const env = { PATH: process.env.PATH, HOME: ctx.scratch('s20-home'), LANG: 'C' };
  const child = spawn('sh', ['-c', `${ctx.sshCommand} -p ${m?.[2]} git@${m?.[1]} "$0"`, command], { env });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdin.on('error', () => undefined);
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  const first = new Promise<number | undefined>((r) => {
    child.stdout.once('data', () => r(Date.now()));
    child.stdout.resume();
    void closed.then(() => r(undefined));
    setTimeout(() => r(undefined), FIRST_BYTE_MS);
  });
  return (async (): Promise<HeldSession> => {
    const firstByteAt = await first;
    if (firstByteAt !== undefined) await input((s) => child.stdin.write(s));
    const endedAt = Date.now();
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await closed;
    clearTimeout(killer);
    return { ...(firstByteAt === undefined ? {} : { firstByteAt }), endedAt, stderr };
  })();
}

const noFirstByte = (service: string, s: HeldSession) =>
  fail(
    `${service}: no byte of the cell's answer within ${FIRST_BYTE_MS / 1000} s while the request body stayed open (an edge that buffers the body deadlocks: the cell speaks first)${s.stderr.trim() ? `; stderr: ${s.stderr.trim().split('\n')[0]}` : ''}`,
  );

async function uploadPack(ctx: CheckContext): Promise<Verdict> {
  const s = await heldSession(ctx, `git-upload-pack '${ROUTED.project}.git'`, async (w) => w('0000'));
  return s.firstByteAt === undefined ? noFirstByte('ssh-upload-pack', s) : pass();
}

/** The last receive-pack request must have reached the cell before its body (held open) ended. */
export function judgeReceiveStreamed(entries: JournalEntry[], endedAt: number): Verdict {
  const reqs = tunnelsOf(entries).filter((e) => e.endpoint.endsWith('/ssh-receive-pack'));
  const last = reqs[reqs.length - 1];
  if (!last) return fail('ssh-receive-pack: no request reached a bridge');
  const early = endedAt - Date.parse(last.time);
  if (early < HELD_MS / 2)
    return fail(
      `ssh-receive-pack request ${reqs.length} reached the cell ${Math.round(-early)} ms after its body ended (held open ${HELD_MS} ms): the edge buffered it`,
    );
  return pass();
}

async function receivePack(ctx: CheckContext): Promise<Verdict> {
  const since = await ctx.cursor();
  const s = await heldSession(ctx, `git-receive-pack '${ROUTED.project}.git'`, async (w) => {
    // A flush (no commands), its two halves apart: the body is open HELD_MS after its first byte.
    w('00');
    await sleep(HELD_MS);
    w('00');
  });
  if (s.firstByteAt === undefined) return noFirstByte('ssh-receive-pack', s);
  return judgeReceiveStreamed(await ctx.journalSince(since), s.endedAt);
}

export const S20: ConformanceCheck = {
  id: 'S20',
  title:
    'no body buffering through the edge: ssh-upload-pack and ssh-receive-pack reach the cell before their bodies end',
  source: 'production#22944, k8s-workloads!5877',
  needs: ['ssh'],
  async run(ctx) {
    if (!edgeTimes(ctx.stack)) return notRun(NEEDS_EDGE);
    return firstFailure([await uploadPack(ctx), await receivePack(ctx)]);
  },
};
