import { performance } from 'node:perf_hooks';
import { gitChildrenOf } from '../../test/helpers/procs.js';

/** Polls `pred` every 20 ms; rejects when it does not hold within `ms`. */
export async function waitUntil(pred: () => boolean, ms: number, what = 'condition'): Promise<void> {
  const end = performance.now() + ms;
  while (!pred()) {
    if (performance.now() > end) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Live (non-zombie) git processes descending from this test process, i.e. the in-process mock Gitaly's. */
export function liveGit(): number {
  return gitChildrenOf([process.pid]).length;
}

/** Resolves when no live git process is left; rejects after `ms` (the bound: 2 s). */
export function gitGone(ms = 2000): Promise<void> {
  return waitUntil(() => liveGit() === 0, ms, 'no git child of mock Gitaly left');
}
