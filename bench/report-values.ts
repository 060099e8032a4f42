import type { GitContenderId, LargeCloneResult } from './git-workloads.js';
import { type Outcome, okValue } from './outcome.js';
import type { BenchResults, ThroughputId } from './results.js';
import { cipherFamily } from './ssh-ciphers.js';
import type { ThroughputResult } from './throughput-runs.js';

/** The figures of a run the ratios and tables compare: medians, percentiles, CPU per clone. */

export function largeMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.largeClone?.[id])?.medianMs;
}
export function historyMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.historyClone?.[id])?.medianMs;
}
/** Mean busy CPU seconds of the whole machine per clone. */
export function machineCpu(clones: Outcome<LargeCloneResult> | undefined): number | undefined {
  const cpu = okValue(clones)?.cpu.map((c) => c.machine);
  return cpu && cpu.length > 0 ? cpu.reduce((a, b) => a + b, 0) / cpu.length : undefined;
}
export function pushMedian(r: BenchResults, id: GitContenderId) {
  return okValue(r.push?.[id])?.medianMs;
}
/** p99 of the highest concurrency level. */
export function concurrentP99(r: BenchResults, id: GitContenderId) {
  const top = Math.max(...r.settings.concurrency);
  return okValue(r.concurrency?.find((c) => c.level === top)?.results[id])?.latency?.p99;
}
export function smallP50(r: BenchResults, id: GitContenderId) {
  return okValue(r.smallClone?.[id])?.p50;
}
export function tput(r: BenchResults, id: ThroughputId) {
  return okValue(r.throughput?.[id])?.medianMiBps;
}

/** Bridge + mock Gitaly (own, git apart) CPU seconds per GiB of a throughput contender. */
export function bridgeAndGitalyCpu(v: ThroughputResult | undefined): number | undefined {
  return v && (v.cpuPerGiB.bridge ?? 0) + (v.cpuPerGiB.gitaly ?? 0);
}

/**
 * The cipher family of the SSH rows without `-c` (what the same client negotiated with OpenSSH
 * and with the router), e.g. ChaCha20-Poly1305; both named when they differ, undefined when not known.
 */
export function defaultCipher(r: BenchResults): string | undefined {
  const openssh = r.settings.ssh.openssh?.cipher;
  const cells = r.settings.ssh.cells?.cipher;
  if (!openssh || !cells) return openssh || cells ? cipherFamily(openssh ?? cells ?? '') : undefined;
  return openssh === cells
    ? cipherFamily(openssh)
    : `OpenSSH ${cipherFamily(openssh)}, cells path ${cipherFamily(cells)}`;
}

/** ` (ChaCha20-Poly1305)` after a name of the default-cipher SSH rows, or nothing when not known. */
export function defaultCipherSuffix(r: BenchResults): string {
  const c = defaultCipher(r);
  return c ? ` (${c})` : '';
}
