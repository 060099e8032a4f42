/**
 * @file The claim store, in memory: which cell holds which claim. Cells write it in two steps, as
 * the Topology Service's ClaimService has them: `begin` opens a lease with the records to create and
 * destroy, `commit` applies it, `rollback` drops it. Nothing is persisted: after a restart the
 * store is empty until the cells claim again (each cell registers its claims when it starts).
 */
import { randomUUID } from 'node:crypto';
import type { Bucket__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/Bucket.js';
import type {
  Metadata,
  Metadata__Output,
} from '../lib/generated/gitlab/cells/topology_service/claims/v1/Metadata.js';
import {
  bucketKey,
  type ClaimField,
  type ClaimKey,
  checkRegistrable,
  claimKey,
  describeKey,
  keyString,
} from './claims.js';
import { ClaimConflict, InvalidArgument, LeaseNotFound, TooManyLeases } from './errors.js';

export interface StoredRecord {
  uuid: string;
  key: ClaimKey;
  cellId: number;
  metadata: Metadata__Output;
  createdAt: Date;
  updatedAt: Date;
}

export interface Lease {
  uuid: string;
  cellId: number;
  creates: { key: ClaimKey; metadata: Metadata__Output }[];
  destroys: ClaimKey[];
  createdAt: Date;
}

export interface CommitResult {
  created: number;
  destroyed: number;
  /** Keys another cell held until this commit (`claimConflict: move`). */
  moved: { key: ClaimKey; from: number }[];
}

export interface StoreOptions {
  /** `move`: a create takes a key over from the cell holding it; `reject`: ALREADY_EXISTS. */
  conflict: 'move' | 'reject';
  /** An uncommitted lease is dropped after this long (a cell that died between the two steps). */
  leaseTtlMs?: number;
  maxLeasesPerCell?: number;
  now?: () => Date;
}

const DEFAULT_LEASE_TTL_MS = 10 * 60_000;
const DEFAULT_MAX_LEASES = 64;

/** The key a record's metadata names: its claim, else its bucket; both must agree when both are set. */
export function metadataKey(metadata: Metadata | Metadata__Output, forCreate: boolean): ClaimKey {
  const fromClaim = metadata.claim ? claimKey(metadata.claim) : undefined;
  const fromBucket = metadata.bucket ? bucketKey(metadata.bucket as Bucket__Output) : undefined;
  if (fromClaim && fromBucket && keyString(fromClaim) !== keyString(fromBucket)) {
    throw InvalidArgument(
      `record names two claims: ${describeKey(fromClaim)} and ${describeKey(fromBucket)}`,
    );
  }
  const key = fromClaim ?? fromBucket;
  if (!key) throw InvalidArgument('record has neither a claim nor a bucket');
  return forCreate ? checkRegistrable(key) : key;
}

export class ClaimStore {
  private readonly records = new Map<string, StoredRecord>();
  private readonly pending = new Map<string, Lease>();
  private readonly opts: Required<StoreOptions>;

  constructor(opts: StoreOptions) {
    this.opts = {
      leaseTtlMs: DEFAULT_LEASE_TTL_MS,
      maxLeasesPerCell: DEFAULT_MAX_LEASES,
      now: () => new Date(),
      ...opts,
    };
  }

  /** Opens a lease for `cellId`; nothing is visible to classify until `commit`. */
  begin(cellId: number, creates: readonly Metadata__Output[], destroys: readonly Metadata__Output[]): Lease {
    this.expireLeases();
    if (this.leases(cellId).length >= this.opts.maxLeasesPerCell) {
      throw TooManyLeases(
        `cell ${cellId} has ${this.opts.maxLeasesPerCell} open leases; commit or roll back first`,
      );
    }
    const lease: Lease = {
      uuid: randomUUID(),
      cellId,
      creates: creates.map((metadata) => ({ key: metadataKey(metadata, true), metadata })),
      destroys: destroys.map((metadata) => metadataKey(metadata, false)),
      createdAt: this.opts.now(),
    };
    const seen = new Set<string>();
    for (const { key } of lease.creates) {
      const k = keyString(key);
      if (seen.has(k)) throw InvalidArgument(`${describeKey(key)} is created twice in one update`);
      seen.add(k);
      if (this.opts.conflict === 'reject') this.checkConflict(cellId, key);
    }
    this.pending.set(lease.uuid, lease);
    return lease;
  }

  /** Applies a lease: its destroys (of this cell's records only), then its creates. */
  commit(cellId: number, uuid: string): CommitResult {
    // `reject` refused conflicting creates at `begin`, and an open lease keeps other cells off its keys.
    const lease = this.openLease(cellId, uuid);
    this.pending.delete(uuid);
    let destroyed = 0;
    for (const key of lease.destroys) {
      const k = keyString(key);
      if (this.records.get(k)?.cellId === cellId) {
        this.records.delete(k);
        destroyed += 1;
      }
    }
    const moved: CommitResult['moved'] = [];
    const now = this.opts.now();
    for (const { key, metadata } of lease.creates) {
      const k = keyString(key);
      const prior = this.records.get(k);
      if (prior && prior.cellId !== cellId) moved.push({ key, from: prior.cellId });
      this.records.set(k, {
        uuid: prior?.cellId === cellId ? prior.uuid : randomUUID(),
        key,
        cellId,
        metadata,
        createdAt: prior?.cellId === cellId ? prior.createdAt : now,
        updatedAt: now,
      });
    }
    return { created: lease.creates.length, destroyed, moved };
  }

  rollback(cellId: number, uuid: string): void {
    this.openLease(cellId, uuid);
    this.pending.delete(uuid);
  }

  lookup(key: ClaimKey): StoredRecord | undefined {
    return this.records.get(keyString(key));
  }

  /** A cell's records, optionally of some claim kinds only, in key order. */
  recordsOf(cellId: number, fields?: ReadonlySet<ClaimField>): StoredRecord[] {
    return [...this.records.values()]
      .filter((r) => r.cellId === cellId && (!fields || fields.size === 0 || fields.has(r.key.field)))
      .sort((a, b) => keyString(a.key).localeCompare(keyString(b.key)));
  }

  /** A cell's open leases, oldest first. */
  leases(cellId: number): Lease[] {
    this.expireLeases();
    return [...this.pending.values()].filter((l) => l.cellId === cellId);
  }

  get size(): number {
    return this.records.size;
  }

  private openLease(cellId: number, uuid: string): Lease {
    this.expireLeases();
    const lease = this.pending.get(uuid);
    if (!lease || lease.cellId !== cellId) throw LeaseNotFound(`cell ${cellId} has no open lease ${uuid}`);
    return lease;
  }

  private checkConflict(cellId: number, key: ClaimKey): void {
    const holder = this.records.get(keyString(key));
    if (holder && holder.cellId !== cellId) {
      throw ClaimConflict(`${describeKey(key)} is claimed by cell ${holder.cellId}`);
    }
    for (const lease of this.pending.values()) {
      if (lease.cellId !== cellId && lease.creates.some((c) => keyString(c.key) === keyString(key))) {
        throw ClaimConflict(`${describeKey(key)} is being claimed by cell ${lease.cellId}`);
      }
    }
  }

  private expireLeases(): void {
    const oldest = this.opts.now().getTime() - this.opts.leaseTtlMs;
    for (const [uuid, lease] of this.pending) {
      if (lease.createdAt.getTime() < oldest) this.pending.delete(uuid);
    }
  }
}
