/**
 * @file Gitaly's `[[concurrency]]` limiter (`internal/limiter/concurrency_limiter.go`), per RPC and
 * repository: at most `maxPerRepo` calls of one RPC run on one repository; the next ones wait in a
 * queue. Admission is bounded by `maxPerRepo + maxQueueSize` (running plus waiting, as Gitaly sizes
 * its queue tokens): the one over it is refused at once with `maximum queue size reached`; one that
 * waits longer than `maxQueueWaitMs` (0: no bound) with `maximum time in concurrency queue reached`.
 * Both are `RESOURCE_EXHAUSTED`. An RPC without an entry is not limited (Gitaly's default).
 */

import { ConfigError } from '../lib/config.js';
import type { GitalyConcurrencyLimit, GitalyLimitedRpc } from '../lib/contracts/topology-file.js';
import { ClientCanceled, ResourceExhausted } from './errors.js';

/**
 * Gitaly's limiter errors (`internal/limiter`: `ErrMaxQueueTime`, `ErrMaxQueueSize`), the whole
 * status message of the `RESOURCE_EXHAUSTED` it answers (gitlab-shell and Workhorse show their own
 * text for the code, never this one).
 */
export const MAX_QUEUE_TIME_MESSAGE = 'maximum time in concurrency queue reached';
export const MAX_QUEUE_SIZE_MESSAGE = 'maximum queue size reached';

export type { GitalyLimitedRpc };
/** One limit with every field given (`maxQueueWaitMs` 0: no bound). */
export type ConcurrencyLimit = Required<GitalyConcurrencyLimit>;

/** The RPCs mock Gitaly serves, by full method name as Gitaly's config names them. */
export const GITALY_LIMITED_RPCS = [
  '/gitaly.SSHService/SSHUploadPackWithSidechannel',
  '/gitaly.SSHService/SSHUploadPack',
  '/gitaly.SSHService/SSHReceivePack',
  '/gitaly.SSHService/SSHUploadArchive',
  '/gitaly.SmartHTTPService/InfoRefsUploadPack',
  '/gitaly.SmartHTTPService/InfoRefsReceivePack',
  '/gitaly.SmartHTTPService/PostUploadPackWithSidechannel',
  '/gitaly.SmartHTTPService/PostReceivePack',
] as const satisfies readonly GitalyLimitedRpc[];

/** Ends a call's hold on its slot (idempotent). */
export type Release = () => void;

interface Waiter {
  admit: () => void;
}

/** One RPC + repository: calls running and calls waiting, in arrival order. */
interface KeyState {
  running: number;
  waiting: Waiter[];
}

/** How a waiting call leaves the queue without running. */
export interface QueueExit {
  /** The caller went away (client cancelled): leave the queue, reject with `CANCELLED`. */
  cancel(): void;
}

function limitsByRpc(limits: readonly ConcurrencyLimit[]): ReadonlyMap<string, ConcurrencyLimit> {
  return new Map(limits.filter((l) => l.maxPerRepo > 0).map((l) => [l.rpc, l]));
}

export class ConcurrencyLimiter {
  private limits: ReadonlyMap<string, ConcurrencyLimit>;
  private readonly keys = new Map<string, KeyState>();

  constructor(limits: readonly ConcurrencyLimit[] = []) {
    this.limits = limitsByRpc(limits);
  }

  /**
   * Replaces the limits (the `gitaly concurrency` control op). Calls running keep their slots; calls
   * waiting are admitted as far as the new limits allow (all of them where an RPC is no longer
   * limited); the next calls meet the new limits. A waiter keeps the wait bound it started with.
   */
  setLimits(limits: readonly ConcurrencyLimit[]): void {
    this.limits = limitsByRpc(limits);
    for (const [key, state] of this.keys) this.admitWaiting(key, state);
  }

  /** Admits the first waiters of `key` while its RPC's current limit has room (all: not limited). */
  private admitWaiting(key: string, state: KeyState): void {
    const limit = this.limits.get(key.slice(0, key.indexOf('\0')));
    while (state.waiting.length > 0 && (!limit || state.running < limit.maxPerRepo)) {
      state.running += 1;
      state.waiting.shift()?.admit();
    }
  }

  /** Whether calls of `rpc` (full method) are limited at all. */
  isLimited(rpc: string): boolean {
    return this.limits.has(rpc);
  }

  /** Calls running for `rpc` on `repo` (tests, journal). */
  running(rpc: string, repo: string): number {
    return this.keys.get(`${rpc}\0${repo}`)?.running ?? 0;
  }

  /**
   * Waits for a slot for `rpc` on `repo` (`storage/relative path`); resolves with its release, or
   * rejects with Gitaly's `RESOURCE_EXHAUSTED`. `onExit` receives the handle a caller cancels with.
   */
  acquire(rpc: string, repo: string, onExit?: (exit: QueueExit) => void): Promise<Release> {
    const limit = this.limits.get(rpc);
    if (!limit) return Promise.resolve(() => undefined);
    const key = `${rpc}\0${repo}`;
    let state = this.keys.get(key);
    if (!state) {
      state = { running: 0, waiting: [] };
      this.keys.set(key, state);
    }
    if (state.running + state.waiting.length >= limit.maxPerRepo + limit.maxQueueSize) {
      this.forget(key, state);
      return Promise.reject(ResourceExhausted(MAX_QUEUE_SIZE_MESSAGE));
    }
    const release = this.releaser(key, state);
    if (state.running < limit.maxPerRepo && state.waiting.length === 0) {
      state.running += 1;
      return Promise.resolve(release);
    }
    return this.wait(key, state, limit, release, onExit);
  }

  private wait(
    key: string,
    state: KeyState,
    limit: ConcurrencyLimit,
    release: Release,
    onExit?: (exit: QueueExit) => void,
  ): Promise<Release> {
    return new Promise<Release>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        clearTimeout(timer);
        state.waiting = state.waiting.filter((w) => w !== waiter);
        this.forget(key, state);
      };
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve(release);
        },
      };
      state.waiting.push(waiter);
      if (limit.maxQueueWaitMs > 0) {
        timer = setTimeout(() => {
          leave();
          reject(ResourceExhausted(MAX_QUEUE_TIME_MESSAGE));
        }, limit.maxQueueWaitMs);
      }
      onExit?.({
        cancel: () => {
          leave();
          reject(ClientCanceled('the client cancelled the call while it waited in the concurrency queue'));
        },
      });
    });
  }

  /** The release of one admitted call: frees its slot and admits the first waiter if the limit has room. */
  private releaser(key: string, state: KeyState): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.running -= 1;
      this.admitWaiting(key, state);
      this.forget(key, state);
    };
  }

  private forget(key: string, state: KeyState): void {
    if (state.running === 0 && state.waiting.length === 0) this.keys.delete(key);
  }
}

/** The `concurrency` setting: a list of limits, each RPC at most once (Gitaly's minimums). */
export function concurrencyValidator(value: unknown, name: string): ConcurrencyLimit[] {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw new ConfigError(`${name} must be a JSON list of {rpc, maxPerRepo, maxQueueSize, maxQueueWaitMs}`);
    }
  }
  if (!Array.isArray(v)) throw new ConfigError(`${name} must be a list of limits`);
  const seen = new Set<string>();
  return v.map((entry: unknown, i) => {
    const at = `${name}[${i}]`;
    const limit = concurrencyEntry(entry, at);
    if (seen.has(limit.rpc)) throw new ConfigError(`${at}.rpc: ${limit.rpc} already has a limit`);
    seen.add(limit.rpc);
    return limit;
  });
}

function concurrencyEntry(entry: unknown, at: string): ConcurrencyLimit {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new ConfigError(`${at} must be an object {rpc, maxPerRepo, maxQueueSize, maxQueueWaitMs}`);
  const e = entry as Record<string, unknown>;
  const extra = Object.keys(e).filter(
    (k) => !['rpc', 'maxPerRepo', 'maxQueueSize', 'maxQueueWaitMs'].includes(k),
  );
  if (extra.length > 0) throw new ConfigError(`${at} has unknown field ${extra.join(', ')}`);
  if (!(GITALY_LIMITED_RPCS as readonly unknown[]).includes(e.rpc))
    throw new ConfigError(
      `${at}.rpc must be one of ${GITALY_LIMITED_RPCS.join(', ')}, got ${JSON.stringify(e.rpc)}`,
    );
  const count = (field: string, min: number): number => {
    const n = e[field];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min)
      throw new ConfigError(`${at}.${field} must be an integer ≥ ${min}, got ${JSON.stringify(n)}`);
    return n;
  };
  return {
    rpc: e.rpc as GitalyLimitedRpc,
    maxPerRepo: count('maxPerRepo', 0),
    maxQueueSize: count('maxQueueSize', 1),
    maxQueueWaitMs: e.maxQueueWaitMs === undefined ? 0 : count('maxQueueWaitMs', 0),
  };
}
