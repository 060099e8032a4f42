import { waitUntil } from '../../test/helpers/poll.js';
import { gitChildrenOf } from '../../test/helpers/procs.js';

/** The tests' one polling helper, here too for the bridge's suites. */
export { waitUntil };

/** Live (non-zombie) git processes descending from this test process, i.e. the in-process mock Gitaly's. */
export function liveGit(): number {
  return gitChildrenOf([process.pid]).length;
}

/** Resolves when no live git process is left; rejects after `ms` (the bound: 2 s). */
export async function gitGone(ms = 2000): Promise<void> {
  await waitUntil(() => liveGit() === 0, ms, 'no git child of mock Gitaly left');
}
