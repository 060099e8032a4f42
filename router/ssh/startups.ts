/**
 * @file A cap on connections that have not authenticated yet, as OpenSSH's `MaxStartups
 * start:rate:full` (and `PerSourceMaxStartups`): below `start` every connection is admitted; from
 * `start` on each new one is dropped with a probability rising linearly from `rate`% to 100% at
 * `full`; per source address at most `perSource` wait for authentication at once. A connection
 * leaves the count once it authenticated or closed.
 */
import { ConfigError, type Validator } from '../../lib/config.js';

export interface MaxStartups {
  start: number;
  rate: number;
  full: number;
}

/** `start:rate:full` or a single `start` (= `start:100:start`, as OpenSSH); `off`/empty = no cap. */
export const maxStartupsValidator: Validator<MaxStartups | undefined> = (v, name) => {
  if (v === undefined || v === '' || v === 'off') return undefined;
  const text = String(v).trim();
  const parts = text.split(':').map((p) => (/^\d+$/.test(p) ? Number(p) : Number.NaN));
  const usage = `${name} must be "start:rate:full" (1 <= start <= full, 0 <= rate <= 100) or "start", got ${JSON.stringify(v)}`;
  if (parts.some(Number.isNaN) || (parts.length !== 1 && parts.length !== 3)) throw new ConfigError(usage);
  const [start = 0, rate = 100, full = start] = parts;
  if (start < 1 || full < start || rate > 100) throw new ConfigError(usage);
  return { start, rate, full };
};

export type StartupVerdict = { admitted: true; release: () => void } | { admitted: false; reason: string };

export class StartupGate {
  private pending = 0;
  private readonly bySource = new Map<string, number>();

  constructor(
    private readonly max: MaxStartups | undefined,
    private readonly perSource: number | undefined,
    private readonly random: () => number = Math.random,
  ) {}

  /** Connections admitted and not yet authenticated or closed. */
  get unauthenticated(): number {
    return this.pending;
  }

  admit(source: string): StartupVerdict {
    const fromSource = this.bySource.get(source) ?? 0;
    if (this.perSource !== undefined && fromSource >= this.perSource)
      return { admitted: false, reason: 'per-source startups limit' };
    if (this.max && this.drop(this.max)) return { admitted: false, reason: 'startups limit' };
    this.pending++;
    this.bySource.set(source, fromSource + 1);
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        this.pending--;
        const left = (this.bySource.get(source) ?? 1) - 1;
        if (left <= 0) this.bySource.delete(source);
        else this.bySource.set(source, left);
      },
    };
  }

  private drop({ start, rate, full }: MaxStartups): boolean {
    if (this.pending >= full) return true;
    if (this.pending < start) return false;
    const p = rate + ((100 - rate) * (this.pending - start)) / (full - start);
    return this.random() * 100 < p;
  }
}
