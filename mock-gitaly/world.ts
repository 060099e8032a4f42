/**
 * @file What a world's control API may do to a mock Gitaly (`onControl('gitaly', …)`): faults per
 * RPC (unavailable, slow, resource-exhausted as Gitaly's concurrency limiter answers, limit-error:
 * `Unavailable` with a `gitaly.LimitError` detail, as Workhorse's busy answers expect), and the cell
 * name and journal sink its RPCs are journaled with (`rpc-journal.ts`).
 */
import { status } from '@grpc/grpc-js';
import type { JournalDraft } from '../lib/contracts/world.js';
import { type ControlArgs, intArg, oneOfArg, onlyArgs, stringArg } from '../lib/control-args.js';
import { ControlArgumentError } from '../lib/world-channel.js';
import {
  type ConcurrencyLimit,
  ConcurrencyLimiter,
  MAX_QUEUE_SIZE_MESSAGE,
  MAX_QUEUE_TIME_MESSAGE,
} from './concurrency.js';
import { limitErrorFailure } from './limit-error-fault.js';

export type GitalyJournal = (draft: JournalDraft) => void;

export { MAX_QUEUE_SIZE_MESSAGE, MAX_QUEUE_TIME_MESSAGE };
/** What an `unavailable` fault answers. */
export const INJECTED_UNAVAILABLE_MESSAGE = 'mock Gitaly is unavailable (fault injected)';

const KINDS = ['unavailable', 'slow', 'resource-exhausted', 'limit-error'] as const;
const LIMITS = ['queue-time', 'queue-size'] as const;
const MAX_DELAY_MS = 600_000;

export interface GitalyFault {
  id: number;
  kind: (typeof KINDS)[number];
  /** The RPC's method name (`SSHReceivePack`); undefined: every RPC. */
  rpc: string | undefined;
  delayMs: number;
  limit: (typeof LIMITS)[number];
  /** Calls it still applies to; undefined: until cleared. */
  remaining: number | undefined;
}

/** What a fault does to one call. */
export type FaultAction =
  | {
      kind: 'fail';
      code: status;
      message: string;
      fault: Record<string, unknown>;
      /** Trailers of the failure (a `limit-error`'s status details). */
      trailers?: Record<string, Buffer>;
    }
  | { kind: 'delay'; ms: number; fault: Record<string, unknown> };

export class GitalyFaults {
  private nextId = 1;
  private faults: GitalyFault[] = [];

  /** `fault {rpc?, kind, delayMs?, times?, limit?}` → `{id}`. */
  add(args: ControlArgs): { id: number } {
    onlyArgs(args, ['rpc', 'kind', 'delayMs', 'times', 'limit']);
    const kind = oneOfArg(args, 'kind', KINDS);
    const rpc = stringArg(args, 'rpc');
    if (rpc !== undefined && !/^[A-Z][A-Za-z0-9]*$/.test(rpc))
      throw new ControlArgumentError('rpc must be a method name such as SSHReceivePack');
    if (kind !== 'slow' && args.delayMs !== undefined)
      throw new ControlArgumentError('delayMs goes with kind slow');
    if (kind !== 'resource-exhausted' && kind !== 'limit-error' && args.limit !== undefined)
      throw new ControlArgumentError('limit goes with kind resource-exhausted or limit-error');
    const delayMs = kind === 'slow' ? intArg(args, 'delayMs', 1, MAX_DELAY_MS) : 0;
    const times = args.times === undefined ? undefined : intArg(args, 'times', 1, 1_000_000);
    const limit = oneOfArg(args, 'limit', LIMITS, 'queue-time');
    const id = this.nextId++;
    this.faults.push({ id, kind, rpc, delayMs, limit, remaining: times });
    return { id };
  }

  clear(args: ControlArgs = {}): { cleared: number } {
    onlyArgs(args, []);
    const cleared = this.faults.length;
    this.faults = [];
    return { cleared };
  }

  get size(): number {
    return this.faults.length;
  }

  /** The first fault for `rpc` (counted as used), as what it does to the call; undefined: none. */
  take(rpc: string): FaultAction | undefined {
    const f = this.faults.find((x) => x.rpc === undefined || x.rpc === rpc);
    if (!f) return undefined;
    if (f.remaining !== undefined) {
      f.remaining -= 1;
      if (f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f);
    }
    const fault: Record<string, unknown> = { id: f.id, kind: f.kind, ...(f.rpc ? { rpc: f.rpc } : {}) };
    switch (f.kind) {
      case 'unavailable':
        return { kind: 'fail', code: status.UNAVAILABLE, message: INJECTED_UNAVAILABLE_MESSAGE, fault };
      case 'resource-exhausted':
      case 'limit-error': {
        const message = f.limit === 'queue-size' ? MAX_QUEUE_SIZE_MESSAGE : MAX_QUEUE_TIME_MESSAGE;
        const code = f.kind === 'limit-error' ? status.UNAVAILABLE : status.RESOURCE_EXHAUSTED;
        return { kind: 'fail', ...limitErrorFailure(code, message), fault: { ...fault, limit: f.limit } };
      }
      case 'slow':
        return { kind: 'delay', ms: f.delayMs, fault: { ...fault, delayMs: f.delayMs } };
    }
  }
}

/** The world's view of one mock Gitaly: its cell, its journal, its faults, its concurrency limiter. */
export interface GitalyWorld {
  cell: string | null;
  journal: GitalyJournal;
  faults: GitalyFaults;
  limiter: ConcurrencyLimiter;
  /** The limits of the configuration (`reset` goes back to them). */
  configuredLimits: readonly ConcurrencyLimit[];
}

export function gitalyWorld(
  cell: string | undefined,
  journal: GitalyJournal = () => undefined,
  concurrency: readonly ConcurrencyLimit[] = [],
): GitalyWorld {
  return {
    cell: cell ?? null,
    journal,
    faults: new GitalyFaults(),
    limiter: new ConcurrencyLimiter(concurrency),
    configuredLimits: concurrency,
  };
}
