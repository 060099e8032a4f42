/**
 * @file The Topology Service's journal entries (`lib/contracts/world.ts`): one per call on either
 * transport, `cell: null`, the full gRPC method or the HTTP path, the claim and request shape of a
 * Classify with its answer, the status (gRPC code name or HTTP status), duration and bytes.
 */
import { status } from '@grpc/grpc-js';
import type { JournalDraft } from '../lib/contracts/world.js';
import type { ClassifyRequest__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { CellDirectory } from './cells.js';
import { InjectedError, type TopologyError } from './errors.js';
import { claimTypeValue } from './world.js';

export type TopologyJournal = (draft: JournalDraft) => void;

/** What a Classify asked: its shape (`claims`, `claim` or `type`) and the claim(s) or type/value. */
export function classifyRequestFields(req: ClassifyRequest__Output): Record<string, unknown> {
  if (req.claims && req.claims.length > 0) {
    const claims = req.claims.map((c) => claimTypeValue(c) ?? null);
    return { shape: 'claims', claim: claims[0], claims };
  }
  if (req.claim) return { shape: 'claim', claim: claimTypeValue(req.claim) ?? null };
  return { shape: 'type', type: req.type ?? 'UNSPECIFIED', value: req.value ?? '' };
}

/** What a Classify answered: the action, the proxy address and the cell it names (null: none of ours). */
export function classifyAnswerFields(res: ClassifyResponse, cells: CellDirectory): Record<string, unknown> {
  const address = res.proxy?.address ?? null;
  const cell = cells.all.find((c) => c.address === address);
  return {
    action: res.action ?? null,
    address,
    cellName: cell?.name ?? null,
    matchedClaim: claimTypeValue(res.matched_claim as Parameters<typeof claimTypeValue>[0]) ?? null,
  };
}

export interface CallRecord {
  started: number;
  startedAt: Date;
  endpoint: string;
  method?: string;
  headers?: Record<string, string>;
  fields: Record<string, unknown>;
  bytesIn: number;
  bytesOut: number;
  status: number | string;
  fault?: Record<string, unknown> | undefined;
}

/** The fault an error carries (a control op decided it), else `other`. */
export function faultOf(err: TopologyError | undefined, other?: Record<string, unknown>) {
  return err instanceof InjectedError ? err.fault : other;
}

export function grpcCodeName(code: status): string {
  return status[code] ?? String(code);
}

export function journalCall(journal: TopologyJournal, r: CallRecord): void {
  journal({
    time: r.startedAt.toISOString(),
    cell: null,
    service: 'topology-service',
    endpoint: r.endpoint,
    ...(r.method ? { method: r.method } : {}),
    ...(r.headers && Object.keys(r.headers).length > 0 ? { headers: r.headers } : {}),
    fields: r.fields,
    status: r.status,
    durationMs: Math.round((performance.now() - r.started) * 10) / 10,
    bytesIn: r.bytesIn,
    bytesOut: r.bytesOut,
    ...(r.fault ? { fault: r.fault } : {}),
  });
}
