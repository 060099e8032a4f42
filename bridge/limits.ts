import type { AppError } from '../lib/errors.js';
import { TooManyTunnels, TooManyUserTunnels } from './errors.js';

export type Acquired = { ok: true; release: () => void } | { ok: false; error: AppError };

/** Counts concurrent tunnels per bridge and per user; a limit of 0 means unlimited. */
export class TunnelLimiter {
  private total = 0;
  private readonly perUser = new Map<string, number>();

  constructor(
    private readonly maxTotal: number,
    private readonly maxPerUser: number,
  ) {}

  acquire(glId: string): Acquired {
    if (this.maxTotal > 0 && this.total >= this.maxTotal) {
      return {
        ok: false,
        error: TooManyTunnels(
          `This server is busy (${this.maxTotal} git operations running). Please try again later.`,
        ),
      };
    }
    const mine = this.perUser.get(glId) ?? 0;
    if (this.maxPerUser > 0 && mine >= this.maxPerUser) {
      return {
        ok: false,
        error: TooManyUserTunnels(
          `Too many concurrent git operations for this user (limit ${this.maxPerUser}). Please try again later.`,
        ),
      };
    }
    this.total += 1;
    this.perUser.set(glId, mine + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = (this.perUser.get(glId) ?? 1) - 1;
        if (left === 0) this.perUser.delete(glId);
        else this.perUser.set(glId, left);
      },
    };
  }

  get active(): number {
    return this.total;
  }

  activeFor(glId: string): number {
    return this.perUser.get(glId) ?? 0;
  }
}
