/**
 * @file `claims.v1.ClaimService`: how cells put their claims into the store (BeginUpdate, then
 * CommitUpdate or RollbackUpdate) and read them back (GetRecord, ListRecords, ListLeases).
 */
import type { BeginUpdateRequest__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/BeginUpdateRequest.js';
import type { BeginUpdateResponse } from '../lib/generated/gitlab/cells/topology_service/claims/v1/BeginUpdateResponse.js';
import type { CommitUpdateRequest__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/CommitUpdateRequest.js';
import type { GetRecordRequest__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/GetRecordRequest.js';
import type { GetRecordResponse } from '../lib/generated/gitlab/cells/topology_service/claims/v1/GetRecordResponse.js';
import type { ListLeasesRequest__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/ListLeasesRequest.js';
import type { ListLeasesResponse } from '../lib/generated/gitlab/cells/topology_service/claims/v1/ListLeasesResponse.js';
import type { ListRecordsRequest__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/ListRecordsRequest.js';
import type { ListRecordsResponse } from '../lib/generated/gitlab/cells/topology_service/claims/v1/ListRecordsResponse.js';
import type { Record as ProtoRecord } from '../lib/generated/gitlab/cells/topology_service/claims/v1/Record.js';
import type { RollbackUpdateRequest__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/RollbackUpdateRequest.js';
import type { Timestamp } from '../lib/generated/google/protobuf/Timestamp.js';
import { type CellDirectory, cellInfo, parseCellId } from './cells.js';
import {
  bucketKey,
  type ClaimField,
  claimKey,
  describeKey,
  fieldOfBucketType,
  fieldOfClaimType,
  keyBucket,
  keyClaim,
} from './claims.js';
import { InvalidArgument, RecordNotFound } from './errors.js';
import type { ClaimStore, CommitResult, StoredRecord } from './store.js';

function timestamp(date: Date): Timestamp {
  const ms = date.getTime();
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}

function protoRecord(record: StoredRecord): ProtoRecord {
  return {
    uuid: { value: record.uuid },
    metadata: {
      bucket: keyBucket(record.key),
      claim: keyClaim(record.key),
      subject: record.metadata.subject ?? null,
      source: record.metadata.source ?? null,
      ...(record.metadata.user_data
        ? {
            user_data: {
              type_url: record.metadata.user_data.type_url ?? '',
              value: record.metadata.user_data.value ?? Buffer.alloc(0),
            },
          }
        : {}),
    },
    cell_id: String(record.cellId),
    status: 'ACTIVE',
    created_at: timestamp(record.createdAt),
    updated_at: timestamp(record.updatedAt),
  };
}

function leaseUuid(lease: { value?: string } | undefined): string {
  const uuid = lease?.value ?? '';
  if (uuid === '') throw InvalidArgument('lease_uuid is required');
  return uuid;
}

/** The claim kinds a ListRecords asks for (by Bucket.Type and by ClaimType); empty = all. */
function kindsOf(req: ListRecordsRequest__Output): Set<ClaimField> {
  const kinds = new Set<ClaimField>();
  for (const type of req.bucket_types ?? []) {
    const field = fieldOfBucketType(String(type));
    if (field) kinds.add(field);
  }
  for (const type of req.claim_types ?? []) {
    const field = fieldOfClaimType(String(type));
    if (field) kinds.add(field);
  }
  return kinds;
}

export class ClaimService {
  constructor(
    private readonly cells: CellDirectory,
    private readonly store: ClaimStore,
  ) {}

  /** Opens a lease for the calling cell; the cell must be configured. */
  beginUpdate(req: BeginUpdateRequest__Output): { response: BeginUpdateResponse; cellId: number } {
    const cell = this.cells.get(req.cell_id);
    const lease = this.store.begin(cell.id, req.create_records ?? [], req.destroy_records ?? []);
    return { response: { cell_id: String(cell.id), lease_uuid: { value: lease.uuid } }, cellId: cell.id };
  }

  commitUpdate(req: CommitUpdateRequest__Output): CommitResult & { cellId: number } {
    const cell = this.cells.get(req.cell_id);
    return { ...this.store.commit(cell.id, leaseUuid(req.lease_uuid)), cellId: cell.id };
  }

  rollbackUpdate(req: RollbackUpdateRequest__Output): { cellId: number } {
    const cell = this.cells.get(req.cell_id);
    this.store.rollback(cell.id, leaseUuid(req.lease_uuid));
    return { cellId: cell.id };
  }

  getRecord(req: GetRecordRequest__Output): GetRecordResponse {
    const key = req.claim ? claimKey(req.claim) : bucketKey(req.bucket);
    const record = this.store.lookup(key);
    const cell = record ? this.cells.byIdOrUndefined(record.cellId) : undefined;
    if (!record || !cell) throw RecordNotFound(`no record for ${describeKey(key)}`);
    return { record: protoRecord(record), cell_info: cellInfo(cell) };
  }

  listRecords(req: ListRecordsRequest__Output): ListRecordsResponse {
    const cellId = parseCellId(req.cell_id);
    return { records: this.store.recordsOf(cellId, kindsOf(req)).map(protoRecord), truncated: false };
  }

  listLeases(req: ListLeasesRequest__Output): ListLeasesResponse {
    const cellId = parseCellId(req.cell_id);
    const limit = req.limit !== undefined && req.limit > 0 ? req.limit : Number.POSITIVE_INFINITY;
    const leases = this.store.leases(cellId).slice(0, limit);
    return {
      leases: leases.map((l) => ({
        uuid: { value: l.uuid },
        created_at: timestamp(l.createdAt),
        updated_at: timestamp(l.createdAt),
      })),
    };
  }
}
