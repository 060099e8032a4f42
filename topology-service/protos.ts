/**
 * @file The Topology Service's protos (`protos/topology_service/`), loaded once with the project's
 * loader options (`lib/proto.ts`), for the server and for clients (the router, the mock cell, tests).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as CellProto } from '../lib/generated/cell_service.js';
import type { ProtoGrpcType as ClaimProto } from '../lib/generated/claim_service.js';
import type { ProtoGrpcType as ClassifyProto } from '../lib/generated/classify_service.js';
import type { ProtoGrpcType as HealthProto } from '../lib/generated/health_service.js';
import { PROTO_LOADER_OPTIONS } from '../lib/proto.js';

export const TOPOLOGY_PROTO_FILES = [
  'topology_service/classify_service.proto',
  'topology_service/cell_service.proto',
  'topology_service/claims/v1/claim_service.proto',
  'topology_service/health_service.proto',
] as const;

type Loaded = ClassifyProto & CellProto & ClaimProto & HealthProto;

export type TopologyPackage = Loaded['gitlab']['cells']['topology_service'] & {
  claims: ClaimProto['gitlab']['cells']['topology_service']['claims'];
};

let cached: { definition: protoLoader.PackageDefinition; pkg: TopologyPackage } | undefined;

function load() {
  if (!cached) {
    const definition = protoLoader.loadSync([...TOPOLOGY_PROTO_FILES], PROTO_LOADER_OPTIONS);
    const loaded = grpc.loadPackageDefinition(definition) as unknown as Loaded;
    cached = { definition, pkg: loaded.gitlab.cells.topology_service as TopologyPackage };
  }
  return cached;
}

/** Service constructors and message definitions of `gitlab.cells.topology_service` (and `.claims.v1`). */
export function topologyPackage(): TopologyPackage {
  return load().pkg;
}

/** The proto-loader definition (serializers by full method name), for byte-level tests. */
export function topologyDefinition(): protoLoader.PackageDefinition {
  return load().definition;
}

/** Full gRPC method paths, as on the wire. */
export const TOPOLOGY_METHODS = {
  classify: '/gitlab.cells.topology_service.ClassifyService/Classify',
  getCells: '/gitlab.cells.topology_service.ClassifyService/GetCells',
  getCell: '/gitlab.cells.topology_service.CellService/GetCell',
  beginUpdate: '/gitlab.cells.topology_service.claims.v1.ClaimService/BeginUpdate',
  commitUpdate: '/gitlab.cells.topology_service.claims.v1.ClaimService/CommitUpdate',
  rollbackUpdate: '/gitlab.cells.topology_service.claims.v1.ClaimService/RollbackUpdate',
  readinessProbe: '/gitlab.cells.topology_service.HealthService/ReadinessProbe',
  livenessProbe: '/gitlab.cells.topology_service.HealthService/LivenessProbe',
} as const;
