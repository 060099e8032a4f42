/**
 * Node/V8 flags a service of the stack starts with, by its dist/ folder (stack/supervisor.ts).
 *
 * `--optimize-for-size` for mock Gitaly and the mock Rails: after each mark-compact V8 lets the old
 * generation grow by at least 8 MiB over the live heap before the next one (2 MiB when it optimizes
 * for size) and keeps the pages it committed on the way. These services' live heaps are 10–25 MiB and
 * their traffic promotes a trickle of short-lived request objects (mock Gitaly's paced young
 * collections, lib/yamux/young-gc.ts, promote more), so their old space took 5–20 minutes of soak
 * traffic to reach that limit: +6–8 MiB of RSS, 10–12 % of a 60 MiB process, read by the soak as
 * growth (test/results/soak.md, "Where the RSS went"). With the 2 MiB step the cycle completes within
 * the warm-up. Measured on this machine (2 cores, loaded): service CPU for 96 mixed soak operations
 * unchanged (mock Gitaly 0.90 vs 0.95 s, mock Rails 0.99 vs 1.01 s), mock Gitaly's for four clones of
 * an 80 MiB pack too (0.69 vs 0.69–0.70 s). Not for the router and the bridge: the flag also caps V8's
 * young generation at 1 MiB, and their data path, with JS objects per packet and frame, then spent
 * 13–40 % more CPU on the same clones; they keep V8's defaults, and the soak reports their plateau.
 */
const SMALL_HEAP = ['--optimize-for-size'] as const;

const FLAGS: Readonly<Record<string, readonly string[]>> = {
  'mock-gitaly': SMALL_HEAP,
  'mock-cell': SMALL_HEAP,
};

export function nodeFlagsFor(service: string): readonly string[] {
  return FLAGS[service] ?? [];
}
