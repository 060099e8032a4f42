/**
 * @file The gRPC side: ClassifyService, CellService, claims.v1.ClaimService and HealthService on
 * one grpc-js server, one log line per call.
 */
import * as grpc from '@grpc/grpc-js';
import { logCall } from './call-log.js';
import { cellInfo } from './cells.js';
import type { TopologyCore } from './core.js';
import { asTopologyError, NotServing, toServiceError } from './errors.js';
import { topologyPackage } from './protos.js';

/** What a handler returns: the answer and extra fields for the call's log line. */
interface Handled<Res> {
  response: Res;
  fields?: Record<string, unknown>;
}

/** The labkit correlation id gitlab-shell and Rails send as gRPC metadata. */
const CORRELATION_KEY = 'x-gitlab-correlation-id';

function unary<Req, Res>(
  core: TopologyCore,
  method: string,
  fn: (req: Req) => Handled<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const started = performance.now();
    const correlation = call.metadata.get(CORRELATION_KEY)[0];
    const base = {
      transport: 'grpc' as const,
      method,
      peer: call.getPeer(),
      ...(correlation === undefined ? {} : { correlation_id: String(correlation) }),
    };
    try {
      const { response, fields } = fn(call.request);
      logCall(core.logger, { ...base, ...fields, ms: Math.round(performance.now() - started) }, undefined);
      callback(null, response);
    } catch (thrown) {
      const err = asTopologyError(thrown);
      logCall(core.logger, { ...base, ms: Math.round(performance.now() - started) }, err);
      callback(toServiceError(err) as grpc.ServiceError);
    }
  };
}

function classifyHandlers(core: TopologyCore): grpc.UntypedServiceImplementation {
  return {
    Classify: unary(core, 'Classify', (req: Parameters<TopologyCore['classify']>[0]) => {
      const c = core.classify(req);
      return { response: c.response, fields: { by: c.by, key: c.key, cell_id: c.cell.id } };
    }),
    GetCells: unary(core, 'GetCells', () => ({ response: core.getCells() })),
  };
}

function claimHandlers(core: TopologyCore): grpc.UntypedServiceImplementation {
  const claims = core.claims;
  return {
    GetCells: unary(core, 'GetCells', () => ({ response: core.getCells() })),
    GetRecord: unary(core, 'GetRecord', (req: Parameters<typeof claims.getRecord>[0]) => ({
      response: claims.getRecord(req),
    })),
    BeginUpdate: unary(core, 'BeginUpdate', (req: Parameters<typeof claims.beginUpdate>[0]) => {
      const { response, cellId } = claims.beginUpdate(req);
      const fields = {
        cell_id: cellId,
        lease: response.lease_uuid?.value,
        creates: req.create_records?.length ?? 0,
        destroys: req.destroy_records?.length ?? 0,
      };
      return { response, fields };
    }),
    CommitUpdate: unary(core, 'CommitUpdate', (req: Parameters<typeof claims.commitUpdate>[0]) => {
      const r = claims.commitUpdate(req);
      for (const m of r.moved) {
        core.logger.info(
          { claim: `${m.key.field} ${m.key.value}`, from: m.from, to: r.cellId },
          'claim moved',
        );
      }
      const fields = { cell_id: r.cellId, created: r.created, destroyed: r.destroyed, moved: r.moved.length };
      return { response: {}, fields };
    }),
    RollbackUpdate: unary(core, 'RollbackUpdate', (req: Parameters<typeof claims.rollbackUpdate>[0]) => ({
      response: {},
      fields: { cell_id: claims.rollbackUpdate(req).cellId },
    })),
    ListLeases: unary(core, 'ListLeases', (req: Parameters<typeof claims.listLeases>[0]) => ({
      response: claims.listLeases(req),
    })),
    ListRecords: unary(core, 'ListRecords', (req: Parameters<typeof claims.listRecords>[0]) => ({
      response: claims.listRecords(req),
    })),
  };
}

function cellHandlers(core: TopologyCore): grpc.UntypedServiceImplementation {
  return {
    GetCell: unary(core, 'GetCell', (req: { cell_id?: string }) => {
      const cell = core.cells.get(req.cell_id);
      return { response: { cell_info: cellInfo(cell) }, fields: { cell_id: cell.id } };
    }),
  };
}

function healthHandlers(core: TopologyCore): grpc.UntypedServiceImplementation {
  return {
    ReadinessProbe: unary(core, 'ReadinessProbe', () => {
      if (!core.ready) throw NotServing('shutting down');
      return { response: {} };
    }),
    LivenessProbe: unary(core, 'LivenessProbe', () => ({ response: {} })),
  };
}

/** A grpc-js server with the four services; not bound yet. */
export function buildGrpcServer(core: TopologyCore): grpc.Server {
  const pkg = topologyPackage();
  const server = new grpc.Server();
  server.addService(pkg.ClassifyService.service, classifyHandlers(core));
  server.addService(pkg.CellService.service, cellHandlers(core));
  server.addService(pkg.claims.v1.ClaimService.service, claimHandlers(core));
  server.addService(pkg.HealthService.service, healthHandlers(core));
  return server;
}
