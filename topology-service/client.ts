/**
 * @file A gRPC client of the Topology Service, as its callers use it: gitlab-shell-style classify
 * (the router's `topology` mode), claim registration (a cell at start and after an organization
 * move), GetCells/GetCell. One channel for every service; plain, TLS or mTLS.
 */
import * as grpc from '@grpc/grpc-js';
import type { CellServiceClient } from '../lib/generated/gitlab/cells/topology_service/CellService.js';
import type { ClassifyServiceClient } from '../lib/generated/gitlab/cells/topology_service/ClassifyService.js';
import type { BeginUpdateResponse__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/BeginUpdateResponse.js';
import type { ClaimServiceClient } from '../lib/generated/gitlab/cells/topology_service/claims/v1/ClaimService.js';
import type { CommitUpdateResponse__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/CommitUpdateResponse.js';
import type { Metadata } from '../lib/generated/gitlab/cells/topology_service/claims/v1/Metadata.js';
import type { HealthServiceClient } from '../lib/generated/gitlab/cells/topology_service/HealthService.js';
import type { Claim } from '../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { type ClaimField, keyBucket } from './claims.js';
import { topologyPackage } from './protos.js';

export interface ClientTls {
  /** CA bundle that signed the server's certificate (PEM). */
  ca: Buffer;
  /** Client certificate and key (PEM), for mTLS. */
  cert?: Buffer;
  key?: Buffer;
  /** Name to verify instead of the address's host (`tls.server_name` in gitlab-shell). */
  serverName?: string;
}

export interface TopologyClients {
  classify: ClassifyServiceClient;
  cells: CellServiceClient;
  claims: ClaimServiceClient;
  health: HealthServiceClient;
  close(): void;
}

function credentials(tls: ClientTls | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key ?? null, tls.cert ?? null);
}

/** Clients of all four services on one channel to `address` (`host:port`). */
export function topologyClients(address: string, tls?: ClientTls): TopologyClients {
  const pkg = topologyPackage();
  const options: grpc.ClientOptions = tls?.serverName
    ? { 'grpc.ssl_target_name_override': tls.serverName }
    : {};
  const classify = new pkg.ClassifyService(address, credentials(tls), options);
  const shared = { ...options, channelOverride: classify.getChannel() };
  const cells = new pkg.CellService(address, credentials(tls), shared);
  const claims = new pkg.claims.v1.ClaimService(address, credentials(tls), shared);
  const health = new pkg.HealthService(address, credentials(tls), shared);
  return { classify, cells, claims, health, close: () => classify.close() };
}

/** Starts one unary call (`(md, options, cb) => client.Method(req, md, options, cb)`). */
export type StartCall<Res> = (
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/** One unary call as a promise; rejects with the grpc-js `ServiceError` (its `code` is the status). */
export function callUnary<Res>(
  start: StartCall<Res>,
  opts: { deadlineMs?: number; metadata?: grpc.Metadata } = {},
): Promise<Res> {
  const options: grpc.CallOptions = opts.deadlineMs ? { deadline: Date.now() + opts.deadlineMs } : {};
  return new Promise((resolve, reject) => {
    start(opts.metadata ?? new grpc.Metadata(), options, (err, res) =>
      err || res === undefined ? reject(err ?? new Error('no response')) : resolve(res),
    );
  });
}

/** A claim of `field` with `value` (`{route: "gitlab-org"}`, `{user_id: "5"}`). */
export function claimOf(field: ClaimField, value: string | number): Claim {
  return { [field]: String(value) };
}

/** The record metadata a cell sends for a claim: the claim and its bucket. */
export function claimRecord(claim: Claim): Metadata {
  const field = Object.keys(claim).find((k) => (claim as Record<string, unknown>)[k] !== undefined);
  if (!field) throw new Error('empty claim');
  const value = String((claim as Record<string, unknown>)[field]);
  return { claim, bucket: keyBucket({ field: field as ClaimField, value }) };
}

/**
 * Registers claims for `cellId` in one lease (BeginUpdate, then CommitUpdate), destroying `destroy`
 * of its own in the same step. What a cell does at start, and the new cell after an organization
 * move. Resolves with the lease's uuid.
 */
export async function updateClaims(
  clients: Pick<TopologyClients, 'claims'>,
  cellId: number,
  create: readonly Claim[],
  destroy: readonly Claim[] = [],
  opts: { deadlineMs?: number } = {},
): Promise<string> {
  const { claims } = clients;
  const cell_id = String(cellId);
  const begin = {
    cell_id,
    create_records: create.map(claimRecord),
    destroy_records: destroy.map(claimRecord),
  };
  const begun = await callUnary<BeginUpdateResponse__Output>(
    (md, o, cb) => claims.BeginUpdate(begin, md, o, cb),
    opts,
  );
  const lease = begun.lease_uuid?.value ?? '';
  const commit = { cell_id, lease_uuid: { value: lease } };
  await callUnary<CommitUpdateResponse__Output>((md, o, cb) => claims.CommitUpdate(commit, md, o, cb), opts);
  return lease;
}
