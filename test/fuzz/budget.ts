import fc from 'fast-check';

/**
 * The one budget of every fuzz target in this folder: `FUZZ_RUNS` cases each (default 300, what
 * `npm test` runs; `npm run test:fuzz` sets 100 000). `FUZZ_SEED` replays a run.
 */
export const FUZZ_RUNS = budget(process.env.FUZZ_RUNS, 300);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

/** Longest one case may take: a decoder that spins on some input fails here instead of hanging. */
export const CASE_MS = 1_000;

function budget(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${raw}`);
  return n;
}

/** fast-check parameters of one target: the shared budget, the seed, a per-case time bound. */
export function runs(share = 1): fc.Parameters<unknown> {
  return {
    numRuns: Math.max(1, Math.round(FUZZ_RUNS * share)),
    timeout: CASE_MS,
    ...(SEED === undefined ? {} : { seed: SEED }),
  };
}

/** Runs a synchronous case and fails it when it took longer than `CASE_MS`; rethrows what it threw. */
export function bounded<T>(fn: () => T): T {
  const r = settle(fn);
  if (!r.ok) throw r.error;
  return r.value;
}

/** `bytes` cut at the given points (taken modulo its length): every split of a stream a reader may see. */
export function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(prev, p));
    prev = p;
  }
  return chunks;
}

/** Arbitrary cut points for `splitAt`. */
export const cutsArb = fc.array(fc.nat(), { maxLength: 16 });

/** What a rejection must be: an instance of `type` and, where the type has one, a code of `codes`. */
export function expectTyped(
  err: unknown,
  type: abstract new (...args: never[]) => Error,
  codes?: Set<string>,
): void {
  if (!(err instanceof type)) throw new Error(`untyped rejection: ${String(err)}`, { cause: err });
  const code = (err as { code?: unknown }).code;
  if (codes && !(typeof code === 'string' && codes.has(code))) {
    throw new Error(`rejection with an unknown code ${String(code)}: ${err.message}`);
  }
}

/** The value of `fn`, or what it threw; a case slower than `CASE_MS` fails either way. */
export function settle<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  const started = performance.now();
  let result: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    result = { ok: true, value: fn() };
  } catch (error) {
    result = { ok: false, error };
  }
  const ms = performance.now() - started;
  if (ms > CASE_MS) throw new Error(`one case took ${ms.toFixed(0)} ms (bound ${CASE_MS} ms)`);
  return result;
}
