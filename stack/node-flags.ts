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
 * `--heap-growing-percent=300` for the router and the bridge: after each mark-compact the old
 * generation may grow to 4× the live heap (V8 picks 1.1–4× from its GC-speed estimate, at least
 * live + 8 MiB) before incremental marking starts again. Their live heap is ~12 MiB, but every
 * chunk they relay is an off-heap Buffer, and those that wait in a write queue across two young
 * collections are promoted and counted against that limit until the next mark-compact. Once V8's
 * memory reducer has run (8 s after start-up, when the process is idle: every router in production,
 * every stack the benchmark left idle between workloads) it grows the heap slowly, the limit
 * stays near live + 9 MiB, and a large clone ran a mark-compact every 70–100 ms (41–47 per 216 MiB
 * pack, `--trace-gc`: "finalize incremental marking via task"): the router's "slow mode", 2.4–3.1 s
 * of CPU per large clone after 15 s idle against 0.9–1.2 s with this flag, five fresh stacks each
 * (`--no-memory-reducer` alone: 1.7–2.9 s). RSS per idle tunnel unchanged (router 42, bridge 52 KiB).
 */
const SMALL_HEAP = ['--optimize-for-size'] as const;
export const TUNNEL_SERVICE_NODE_FLAGS = ['--max-semi-space-size=2', '--heap-growing-percent=300'] as const;

const FLAGS: Readonly<Record<string, readonly string[]>> = {
  'mock-gitaly': SMALL_HEAP,
  'mock-cell': SMALL_HEAP,
  router: TUNNEL_SERVICE_NODE_FLAGS,
  bridge: TUNNEL_SERVICE_NODE_FLAGS,
};

export function nodeFlagsFor(service: string): readonly string[] {
  return FLAGS[service] ?? [];
}
