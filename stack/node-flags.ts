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
 * 13–40 % more CPU on the same clones.
 *
 * `--max-semi-space-size=2` (MiB) for the router and the bridge: the young-generation cap alone, at
 * two 2 MiB semi-spaces instead of V8's two 16 MiB. At the default a burst of tunnel set-ups (key
 * exchange, JWTs, pre-authorization, the gRPC call) grows the young generation to its maximum, and
 * ~8 MiB more of it stays resident while the tunnels idle: over half of the benchmark's "RSS per idle
 * tunnel" (README "Performance", Memory). Their pack bytes are off-heap Buffers; interleaved A/B of
 * the benchmark's large clone and bridge-only throughput measured no CPU cost.
 *
 * `--heap-growing-percent=300` for the router: after each mark-compact the old
 * generation may grow to 4× the live heap (V8 picks 1.1–4× from its GC-speed estimate, at least
 * live + 8 MiB) before incremental marking starts again. Its live heap is ~12 MiB, but every
 * chunk it relays is an off-heap Buffer, and those that wait in a write queue across two young
 * collections are promoted and counted against that limit until the next mark-compact. Once V8's
 * memory reducer has run (8 s after start-up, when the process is idle: every router in production,
 * every stack the benchmark left idle between workloads) it grows the heap slowly, the limit
 * stays near live + 9 MiB, and a large clone ran a mark-compact every 70–100 ms (41–47 per 216 MiB
 * pack, `--trace-gc`: "finalize incremental marking via task"): the router's "slow mode", 2.4–3.1 s
 * of CPU per large clone after 15 s idle against 0.9–1.2 s with this flag, five fresh stacks each
 * (`--no-memory-reducer` alone: 1.7–2.9 s). RSS per idle tunnel unchanged (router 42, bridge 52 KiB).
 *
 * Not for the bridge, nor for mock Gitaly (measured 2026-12-06). The bridge's CPU per large clone after
 * the same 12 s idle was the same without it (0.49–0.67 s with, 0.48–0.70 s without; 2 rounds of 5
 * fresh stacks each way, interleaved), and with it an 8-minute soak saw the bridges' heap climb from 15
 * to 40 MiB without a mark-compact (the limit: 4× live) and their RSS by +14 to +20 % after the warm-up,
 * over the soak's 10 %. Mock Gitaly's push path is where it would save most: a push's pack arrives as
 * grpc-js messages of up to 128 KiB that wait in git's stdin queue across two young collections, are
 * promoted and counted against an old-generation limit `--optimize-for-size` keeps at live + 2 MiB, so
 * the 6 pushes of `npm run bench -- --only push` ran 85 incremental mark-compacts (4.6 s of its CPU);
 * with this flag added, 4 (2.5 s). But the same soak then saw mock Gitaly's RSS +11.6 % after the
 * warm-up: the soak's bar is kept, and the push ratios carry that cost (README "Performance").
 * The 8-minute soak with the bridges back on the young-generation cap alone: bridges +2.4 to +2.9 %.
 */
const SMALL_HEAP = ['--optimize-for-size'] as const;
export const BRIDGE_NODE_FLAGS = ['--max-semi-space-size=2'] as const;
export const ROUTER_NODE_FLAGS = [...BRIDGE_NODE_FLAGS, '--heap-growing-percent=300'] as const;

const FLAGS: Readonly<Record<string, readonly string[]>> = {
  'mock-gitaly': SMALL_HEAP,
  'mock-cell': SMALL_HEAP,
  router: ROUTER_NODE_FLAGS,
  bridge: BRIDGE_NODE_FLAGS,
};

export function nodeFlagsFor(service: string): readonly string[] {
  return FLAGS[service] ?? [];
}
