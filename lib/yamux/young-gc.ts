import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Young-generation collections paced by the bytes a process moves through yamux (opt-in per session
 * with `youngGcEveryBytes`; the counter is shared by every session of the process).
 *
 * Why: every socket read brings 64 KiB whose bytes live outside the JS heap but only a few hundred
 * bytes of JS objects, so V8's young generation (up to 16 MiB) fills only every few hundred MiB of
 * data. Meanwhile the dead reads' memory, still unreclaimed, counts against the old generation's
 * allocation limit, and V8 runs a full mark-compact whenever the two meet — every 15–30 MiB served,
 * in about half of the processes (which half depends on heap limits V8 picks at run time). Measured
 * on a 216 MiB upload-pack through the bridge: ~30 mark-compacts and ≈ 2.8 CPU s/GiB without, 1 and
 * ≈ 1.35 s/GiB with a scavenge every 4 MiB; each scavenge costs well under a millisecond because
 * nearly nothing in the young generation is alive. (`--max-semi-space-size=1` on the command line
 * does the same, but a library cannot choose its host's flags.)
 */
type MinorGc = (options: { type: 'minor' }) => void;

/** The pace measured above: one scavenge per 4 MiB (8 MiB still let a few mark-compacts through). */
export const YOUNG_GC_PACE_BYTES = 4 * 1024 * 1024;

let gc: MinorGc | null | undefined;
let moved = 0;

/** V8's `gc` function, exposed for this purpose only; null where the runtime refuses it. */
function minorGc(): MinorGc | null {
  if (gc !== undefined) return gc;
  const existing = (globalThis as { gc?: MinorGc }).gc;
  try {
    if (existing) {
      gc = existing;
    } else {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as MinorGc;
    }
  } catch {
    gc = null;
  }
  return gc;
}

/** Counts `bytes` moved; runs a young-generation collection once `everyBytes` have passed. */
export function paceYoungGc(bytes: number, everyBytes: number): void {
  moved += bytes;
  if (moved < everyBytes) return;
  moved = 0;
  minorGc()?.({ type: 'minor' });
}
