import type * as grpc from '@grpc/grpc-js';
import type { InfoRefsRequest__Output } from './generated/gitaly/InfoRefsRequest.js';
import type { InfoRefsResponse__Output } from './generated/gitaly/InfoRefsResponse.js';
import type { PostReceivePackRequest__Output } from './generated/gitaly/PostReceivePackRequest.js';
import type { PostReceivePackResponse__Output } from './generated/gitaly/PostReceivePackResponse.js';
import type { PostUploadPackWithSidechannelRequest__Output } from './generated/gitaly/PostUploadPackWithSidechannelRequest.js';
import type { PostUploadPackWithSidechannelResponse__Output } from './generated/gitaly/PostUploadPackWithSidechannelResponse.js';
import { loadGitalyService } from './proto.js';

/** `gitaly.SmartHTTPService` (protos/smarthttp.proto): git's smart HTTP transport over gRPC. */

/** The `gitaly.SmartHTTPService` definition, loaded once. */
export function loadSmartHttpService(): grpc.ServiceClientConstructor {
  return loadGitalyService('smarthttp.proto', 'SmartHTTPService');
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
