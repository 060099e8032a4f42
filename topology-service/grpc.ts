/**
 * @file The gRPC side: ClassifyService, CellService, claims.v1.ClaimService and HealthService on
 * one grpc-js server, one log line and one journal entry per call.
 */
import * as grpc from '@grpc/grpc-js';
import { journalHeaders } from '../lib/journal-fields.js';
import { logCall } from './call-log.js';
import { cellInfo } from './cells.js';
import type { TopologyCore } from './core.js';
import { asTopologyError, NotServing, type TopologyError, toServiceError } from './errors.js';
import {
  classifyAnswerFields,
  classifyRequestFields,
  faultOf,
  grpcCodeName,
  journalCall,
} from './journal.js';
import { topologyPackage } from './protos.js';

/** What a handler returns: the answer, fields for the call's log line and for its journal entry. */
interface Handled<Res> {
  response: Res;
  fields?: Record<string, unknown>;
  journal?: Record<string, unknown>;
  fault?: Record<string, unknown> | undefined;
}

/** One method: what it answers, and what of its request the journal keeps. */
interface MethodSpec<Req, Res> {
  run(req: Req): Handled<Res> | Promise<Handled<Res>>;
  describe?(req: Req): Record<string, unknown>;
}

/** The labkit correlation id gitlab-shell and Rails send as gRPC metadata. */
const CORRELATION_KEY = 'x-gitlab-correlation-id';
const JOURNAL_METADATA = [CORRELATION_KEY, 'user-agent', 'authorization'];

function metadataHeaders(metadata: grpc.Metadata): Record<string, string> {
  const map = metadata.getMap();
  const plain: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) plain[k] = Buffer.isBuffer(v) ? v.toString('base64') : v;
  return journalHeaders(plain, JOURNAL_METADATA);
}

function byteLength(serialize: (value: unknown) => Buffer, value: unknown): number {
  try {
    return serialize(value).length;
  } catch {
    return 0;
  }
}

function unary<Req, Res>(
  core: TopologyCore,
  def: grpc.MethodDefinition<Req, Res>,
  name: string,
  spec: MethodSpec<Req, Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const started = performance.now();
    const startedAt = new Date();
    const correlation = call.metadata.get(CORRELATION_KEY)[0];
    const base = {
      transport: 'grpc' as const,
      method: name,
      peer: call.getPeer(),
      ...(correlation === undefined ? {} : { correlation_id: String(correlation) }),
    };
    const record = {
      started,
      startedAt,
      endpoint: def.path,
      headers: metadataHeaders(call.metadata),
      bytesIn: byteLength(def.requestSerialize as (v: unknown) => Buffer, call.request),
    };
    const requestFields = spec.describe?.(call.request) ?? {};
    const succeed = (h: Handled<Res>) => {
      logCall(core.logger, { ...base, ...h.fields, ms: Math.round(performance.now() - started) }, undefined);
      callback(null, h.response);
      const bytesOut = byteLength(def.responseSerialize as (v: unknown) => Buffer, h.response);
      const fields = { ...requestFields, ...h.journal };
      journalCall(core.journal, { ...record, fields, status: 'OK', bytesOut, fault: h.fault });
    };
    const fail = (thrown: unknown) => {
      const err: TopologyError = asTopologyError(thrown);
      logCall(core.logger, { ...base, ms: Math.round(performance.now() - started) }, err);
      callback(toServiceError(err) as grpc.ServiceError);
      const fields = { ...requestFields, message: err.message };
      const status = grpcCodeName(err.grpcCode);
      journalCall(core.journal, { ...record, fields, status, bytesOut: 0, fault: faultOf(err) });
    };
    try {
      const out = spec.run(call.request);
      if (out instanceof Promise) out.then(succeed, fail);
      else succeed(out);
    } catch (thrown) {
      fail(thrown);
    }
  };
}

type ClassifyReq = Parameters<TopologyCore['classify']>[0];
type Specs = Record<string, MethodSpec<never, unknown>>;

function classifySpecs(core: TopologyCore): Specs {
  const classify: MethodSpec<ClassifyReq, unknown> = {
    describe: classifyRequestFields,
    async run(req) {
      const c = await core.classifyInWorld(req);
      const fields = c.classified
        ? { by: c.classified.by, key: c.classified.key, cell_id: c.classified.cell.id }
        : { by: 'world', fault: c.fault };
      return {
        response: c.response,
        fields,
        journal: classifyAnswerFields(c.response, core.cells),
        fault: c.fault,
      };
    },
  };
  return {
    Classify: classify as MethodSpec<never, unknown>,
    GetCells: { run: () => ({ response: core.getCells() }) },
  };
}

function claimSpecs(core: TopologyCore): Specs {
  const claims = core.claims;
  const cellName = (id: number) => core.cells.byIdOrUndefined(id)?.name ?? null;
  return {
    GetCells: { run: () => ({ response: core.getCells() }) },
    GetRecord: {
      run: (req: Parameters<typeof claims.getRecord>[0]) => ({ response: claims.getRecord(req) }),
    },
    BeginUpdate: {
      run: (req: Parameters<typeof claims.beginUpdate>[0]) => {
        const { response, cellId } = claims.beginUpdate(req);
        const counts = {
          creates: req.create_records?.length ?? 0,
          destroys: req.destroy_records?.length ?? 0,
        };
        const fields = { cell_id: cellId, lease: response.lease_uuid?.value, ...counts };
        return { response, fields, journal: { cellId, cellName: cellName(cellId), ...counts } };
      },
    },
    CommitUpdate: {
      run: (req: Parameters<typeof claims.commitUpdate>[0]) => {
        const r = claims.commitUpdate(req);
        for (const m of r.moved) {
          core.logger.info(
            { claim: `${m.key.field} ${m.key.value}`, from: m.from, to: r.cellId },
            'claim moved',
          );
        }
        const counts = { created: r.created, destroyed: r.destroyed, moved: r.moved.length };
        const journal = { cellId: r.cellId, cellName: cellName(r.cellId), ...counts };
        return { response: {}, fields: { cell_id: r.cellId, ...counts }, journal };
      },
    },
    RollbackUpdate: {
      run: (req: Parameters<typeof claims.rollbackUpdate>[0]) => {
        const { cellId } = claims.rollbackUpdate(req);
        return { response: {}, fields: { cell_id: cellId }, journal: { cellId, cellName: cellName(cellId) } };
      },
    },
    ListLeases: {
      run: (req: Parameters<typeof claims.listLeases>[0]) => ({ response: claims.listLeases(req) }),
    },
    ListRecords: {
      run: (req: Parameters<typeof claims.listRecords>[0]) => ({ response: claims.listRecords(req) }),
    },
  };
}

function cellSpecs(core: TopologyCore): Specs {
  return {
    GetCell: {
      run: (req: { cell_id?: string }) => {
        const cell = core.cells.get(req.cell_id);
        const journal = { cellId: cell.id, cellName: cell.name };
        return { response: { cell_info: cellInfo(cell) }, fields: { cell_id: cell.id }, journal };
      },
    },
  };
}

function healthSpecs(core: TopologyCore): Specs {
  return {
    ReadinessProbe: {
      run: () => {
        if (!core.ready) throw NotServing('shutting down');
        return { response: {} };
      },
    },
    LivenessProbe: { run: () => ({ response: {} }) },
  };
}

function implementation(
  core: TopologyCore,
  service: grpc.ServiceDefinition,
  specs: Specs,
): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const [name, spec] of Object.entries(specs)) {
    const def = service[name];
    if (!def) throw new Error(`no method ${name} in the service definition`);
    const method = def as unknown as grpc.MethodDefinition<never, unknown>;
    impl[name] = unary(core, method, name, spec) as unknown as grpc.UntypedHandleCall;
  }
  return impl;
}

/** A grpc-js server with the four services; not bound yet. */
export function buildGrpcServer(core: TopologyCore): grpc.Server {
  const pkg = topologyPackage();
  const server = new grpc.Server();
  const add = (service: grpc.ServiceDefinition, specs: Specs) =>
    server.addService(service, implementation(core, service, specs));
  add(pkg.ClassifyService.service, classifySpecs(core));
  add(pkg.CellService.service, cellSpecs(core));
  add(pkg.claims.v1.ClaimService.service, claimSpecs(core));
  add(pkg.HealthService.service, healthSpecs(core));
  return server;
}
