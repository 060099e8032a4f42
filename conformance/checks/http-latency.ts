/**
 * @file H11 (reference-cell.md §5.2): the HTTP front adds no multi-second first-byte stall. The
 * same requests go through the router under test and straight to the owning cell's front door
 * (stack.json `shellEndpoint`, what the router dials: the bridge, or the edge in front of it); the
 * check compares the medians of the time to the first body byte.
 */
import { performance } from 'node:perf_hooks';
import { type ConformanceCheck, fail, pass } from '../check.js';
import { kitBasic } from '../http-probe.js';
import { ROUTED } from '../world-plan.js';

/** How much the router may add to the cell's own median time to first byte. */
export const H11_BOUND_MS = 1000;
/** Requests per path and per target (the median decides). */
const ROUNDS = 3;

/** Milliseconds from sending `GET <base><path>` until its first body byte (or its end, if empty). */
async function firstByteMs(base: string, path: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, {
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  const reader = res.body?.getReader();
  if (reader) {
    await reader.read();
    await reader.cancel();
  }
  return performance.now() - started;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The routed project's paths the check times: git's first request and a plain page. */
const PATHS = [`/${ROUTED.project}.git/info/refs?service=git-upload-pack`, `/${ROUTED.project}`] as const;

export const H11: ConformanceCheck = {
  id: 'H11',
  title: `no first-byte stall: the front adds at most ${H11_BOUND_MS} ms to the owning cell's own median (git info/refs, a page)`,
  source: 'production-engineering#29267; reference-cell.md H11',
  needs: ['http'],
  async run(ctx) {
    const cell = ctx.stack.cells.find((c) => c.name === ROUTED.cell);
    if (!cell) throw new Error(`the world has no cell ${ROUTED.cell}`);
    const headers = { authorization: kitBasic() };
    const stalls: string[] = [];
    for (const path of PATHS) {
      const front: number[] = [];
      const own: number[] = [];
      // Interleaved, so a busy moment of the machine weighs on both.
      for (let i = 0; i < ROUNDS; i++) {
        front.push(await firstByteMs(ctx.router.http ?? '', path, headers));
        own.push(await firstByteMs(cell.shellEndpoint, path, headers));
      }
      const added = median(front) - median(own);
      if (added > H11_BOUND_MS)
        stalls.push(
          `${path.split('?')[0]}: front ${ms(front)} vs cell ${ms(own)} (+${Math.round(added)} ms)`,
        );
    }
    return stalls.length === 0 ? pass() : fail(stalls.join('; '));
  },
};

const ms = (xs: number[]): string => `[${xs.map((x) => Math.round(x)).join(', ')}] ms`;
