import type { Duplex } from 'node:stream';

/** What a sidechannel call waits on: the stream Gitaly opens back, matched by `id`. */
export interface SidechannelWaiter {
  readonly id: bigint;
  /** Resolves with the stream once Gitaly has opened it and we answered `ok`. */
  readonly stream: Promise<Duplex>;
  /** True once a stream was delivered. */
  readonly arrived: boolean;
  /** Drops the waiter (the call ended); a stream that arrives later is refused. */
  close(): void;
}

/**
 * Process-wide ids for sidechannel calls, as Gitaly clients keep them: each call registers before
 * it starts, sends the id as `gitaly-sidechannel-id`, and the stream Gitaly opens on any backchannel
 * session is handed to the waiter with that id. An id is used once.
 */
export class SidechannelRegistry {
  private next = 0n;
  private readonly waiters = new Map<bigint, (stream: Duplex) => void>();

  register(): SidechannelWaiter {
    const id = this.next++;
    let deliver!: (stream: Duplex) => void;
    const stream = new Promise<Duplex>((resolve) => {
      deliver = resolve;
    });
    let arrived = false;
    this.waiters.set(id, (s) => {
      arrived = true;
      this.waiters.delete(id);
      deliver(s);
    });
    return {
      id,
      stream,
      get arrived() {
        return arrived;
      },
      close: () => {
        this.waiters.delete(id);
      },
    };
  }

  /** True when a waiter took the stream; false for an unknown (or already used) id. */
  deliver(id: bigint, stream: Duplex): boolean {
    const waiter = this.waiters.get(id);
    if (!waiter) return false;
    waiter(stream);
    return true;
  }

  has(id: bigint): boolean {
    return this.waiters.has(id);
  }

  get size(): number {
    return this.waiters.size;
  }
}
