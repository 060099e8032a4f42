/** Statistics used by the benchmark: nearest-rank percentiles, medians, ratios. */

/**
 * Nearest-rank percentile (the smallest sample with at least p % of the samples at or below it).
 * `p` is in (0, 100]; an empty sample set has no percentile.
 */
export function percentile(samples: readonly number[], p: number): number | undefined {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile ${p} is outside (0, 100]`);
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Middle value (mean of the two middle values for an even count). */
export function median(samples: readonly number[]): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export interface LatencySummary {
  count: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** p50/p95/p99 and friends of a non-empty sample set; undefined when there is nothing to summarize. */
export function summarize(samples: readonly number[]): LatencySummary | undefined {
  if (samples.length === 0) return undefined;
  const at = (p: number) => percentile(samples, p) as number;
  return {
    count: samples.length,
    min: Math.min(...samples),
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: Math.max(...samples),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** a / b, or undefined when either side is missing or b is not a positive number. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0)
    return undefined;
  return a / b;
}

export const MIB = 1024 * 1024;

/** Bytes over milliseconds → MiB/s. */
export function mibPerSecond(bytes: number, ms: number): number | undefined {
  return ms > 0 ? bytes / MIB / (ms / 1000) : undefined;
}
