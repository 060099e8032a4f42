import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { InfoRefsRequest__Output } from './generated/gitaly/InfoRefsRequest.js';
import type { InfoRefsResponse__Output } from './generated/gitaly/InfoRefsResponse.js';
import type { PostReceivePackRequest__Output } from './generated/gitaly/PostReceivePackRequest.js';
import type { PostReceivePackResponse__Output } from './generated/gitaly/PostReceivePackResponse.js';
import type { PostUploadPackWithSidechannelRequest__Output } from './generated/gitaly/PostUploadPackWithSidechannelRequest.js';
import type { PostUploadPackWithSidechannelResponse__Output } from './generated/gitaly/PostUploadPackWithSidechannelResponse.js';
import { PROTO_LOADER_OPTIONS } from './proto.js';

/** `gitaly.SmartHTTPService` (protos/smarthttp.proto): git's smart HTTP transport over gRPC. */

let cached: grpc.ServiceClientConstructor | undefined;

/** The `gitaly.SmartHTTPService` definition, loaded once. */
export function loadSmartHttpService(): grpc.ServiceClientConstructor {
  if (!cached) {
    const def = protoLoader.loadSync('smarthttp.proto', PROTO_LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      gitaly: { SmartHTTPService: grpc.ServiceClientConstructor };
    };
    cached = pkg.gitaly.SmartHTTPService;
  }
  return cached;
}

export type InfoRefsRequest = InfoRefsRequest__Output;
export type InfoRefsResponse = InfoRefsResponse__Output;
export type PostUploadPackWithSidechannelRequest = PostUploadPackWithSidechannelRequest__Output;
export type PostUploadPackWithSidechannelResponse = PostUploadPackWithSidechannelResponse__Output;
export type PostReceivePackRequest = PostReceivePackRequest__Output;
export type PostReceivePackResponse = PostReceivePackResponse__Output;

export const SMART_HTTP_RPC = {
  infoRefsUploadPack: 'InfoRefsUploadPack',
  infoRefsReceivePack: 'InfoRefsReceivePack',
  postUploadPack: 'PostUploadPackWithSidechannel',
  postReceivePack: 'PostReceivePack',
} as const;
