/**
 * @file The broken router double's man in the middle on the router → Topology Service leg: a gRPC
 * `ClassifyService` on loopback that passes each `Classify` on to the world's Topology Service and
 * its answer (or error) back. A breakage's hooks (`breakages.ts`) make the router's client behave as
 * a broken one would: ask again after a final code, take a transient code for a final one, read a
 * `proxy.address` leniently, or use another cell than the one a key's claim names. The world's
 * journal records every Classify the leg sends, as it records a router's.
 */
import * as grpc from '@grpc/grpc-js';
import type { ClassifyRequest__Output } from '../../../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse__Output } from '../../../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { Claim__Output } from '../../../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { callUnary, topologyClients } from '../../../topology-service/client.js';
import { topologyPackage } from '../../../topology-service/protos.js';

/** A claim as `{type, value}` (`route`, `ssh_key_fingerprint`, …). */
export interface LegClaim {
  type: string;
  value: string;
}

/** One Classify as far as the leg has got: what to send, and a way to send it again. */
export interface ClassifyCall {
  claim: LegClaim | undefined;
  /** Sends the request to the Topology Service once more. */
  again(): Promise<ClassifyResponse__Output>;
}

export interface TsLegHooks {
  /** Called with the Topology Service's error: rethrow it (or another), or answer instead. */
  failed?(err: grpc.ServiceError, call: ClassifyCall): Promise<ClassifyResponse__Output>;
  /** Changes the answer before the router gets it. */
  answered?(res: ClassifyResponse__Output, call: ClassifyCall): ClassifyResponse__Output;
}

export interface TsLeg {
  /** `127.0.0.1:<port>`. */
  address: string;
  close(): Promise<void>;
}

function legClaim(claim: Claim__Output | null | undefined): LegClaim | undefined {
  const type = claim?.claim;
  if (!claim || !type) return undefined;
  return { type, value: String(claim[type]) };
}

/** The request the router sent, rebuilt with its one claim member (the decoded object has them all). */
function forwarded(req: ClassifyRequest__Output): Record<string, unknown> {
  const claim = legClaim(req.claim);
  if (claim) return { claim: { [claim.type]: claim.value } };
  return req as unknown as Record<string, unknown>;
}

/** What is left of the router's deadline for the call (none: undefined). */
function remainingMs(deadline: grpc.Deadline): number | undefined {
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  return Number.isFinite(at) ? Math.max(1, at - Date.now()) : undefined;
}

export async function startTsLeg(upstream: string, hooks: TsLegHooks): Promise<TsLeg> {
  const clients = topologyClients(upstream);
  const server = new grpc.Server();
  const classify: grpc.handleUnaryCall<ClassifyRequest__Output, ClassifyResponse__Output> = (call, cb) => {
    const request = forwarded(call.request);
    const deadlineMs = remainingMs(call.getDeadline());
    const once = () =>
      callUnary<ClassifyResponse__Output>(
        (md, o, done) => clients.classify.Classify(request as never, md, o, done),
        { metadata: call.metadata, ...(deadlineMs === undefined ? {} : { deadlineMs }) },
      );
    const legCall: ClassifyCall = { claim: legClaim(call.request.claim), again: once };
    once()
      .then(
        (res) => (hooks.answered ? hooks.answered(res, legCall) : res),
        (err: grpc.ServiceError) => (hooks.failed ? hooks.failed(err, legCall) : Promise.reject(err)),
      )
      .then(
        (res) => cb(null, res),
        (err: grpc.ServiceError) => cb(err),
      );
  };
  server.addService(topologyPackage().ClassifyService.service, { Classify: classify });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: async () => {
      clients.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
