// Original file: protos/smarthttp.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { InfoRefsRequest as _gitaly_InfoRefsRequest, InfoRefsRequest__Output as _gitaly_InfoRefsRequest__Output } from '../gitaly/InfoRefsRequest.js';
import type { InfoRefsResponse as _gitaly_InfoRefsResponse, InfoRefsResponse__Output as _gitaly_InfoRefsResponse__Output } from '../gitaly/InfoRefsResponse.js';
import type { PostReceivePackRequest as _gitaly_PostReceivePackRequest, PostReceivePackRequest__Output as _gitaly_PostReceivePackRequest__Output } from '../gitaly/PostReceivePackRequest.js';
import type { PostReceivePackResponse as _gitaly_PostReceivePackResponse, PostReceivePackResponse__Output as _gitaly_PostReceivePackResponse__Output } from '../gitaly/PostReceivePackResponse.js';
import type { PostUploadPackWithSidechannelRequest as _gitaly_PostUploadPackWithSidechannelRequest, PostUploadPackWithSidechannelRequest__Output as _gitaly_PostUploadPackWithSidechannelRequest__Output } from '../gitaly/PostUploadPackWithSidechannelRequest.js';
import type { PostUploadPackWithSidechannelResponse as _gitaly_PostUploadPackWithSidechannelResponse, PostUploadPackWithSidechannelResponse__Output as _gitaly_PostUploadPackWithSidechannelResponse__Output } from '../gitaly/PostUploadPackWithSidechannelResponse.js';

export interface SmartHTTPServiceClient extends grpc.Client {
  /**
   * GET /info/refs?service=git-receive-pack, likewise for receive-pack.
   */
  InfoRefsReceivePack(argument: _gitaly_InfoRefsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  InfoRefsReceivePack(argument: _gitaly_InfoRefsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  /**
   * GET /info/refs?service=git-receive-pack, likewise for receive-pack.
   */
  infoRefsReceivePack(argument: _gitaly_InfoRefsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  infoRefsReceivePack(argument: _gitaly_InfoRefsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  
  /**
   * GET /info/refs?service=git-upload-pack: `# service=git-upload-pack` pkt, flush, then the
   * advertisement of `git upload-pack --stateless-rpc --advertise-refs`.
   */
  InfoRefsUploadPack(argument: _gitaly_InfoRefsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  InfoRefsUploadPack(argument: _gitaly_InfoRefsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  /**
   * GET /info/refs?service=git-upload-pack: `# service=git-upload-pack` pkt, flush, then the
   * advertisement of `git upload-pack --stateless-rpc --advertise-refs`.
   */
  infoRefsUploadPack(argument: _gitaly_InfoRefsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  infoRefsUploadPack(argument: _gitaly_InfoRefsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_gitaly_InfoRefsResponse__Output>;
  
  /**
   * POST /git-receive-pack: bidi; the first message carries no data.
   */
  PostReceivePack(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_PostReceivePackRequest, _gitaly_PostReceivePackResponse__Output>;
  PostReceivePack(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_PostReceivePackRequest, _gitaly_PostReceivePackResponse__Output>;
  /**
   * POST /git-receive-pack: bidi; the first message carries no data.
   */
  postReceivePack(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_PostReceivePackRequest, _gitaly_PostReceivePackResponse__Output>;
  postReceivePack(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_PostReceivePackRequest, _gitaly_PostReceivePackResponse__Output>;
  
  /**
   * POST /git-upload-pack: the request body travels on a sidechannel as pkt frames ending with a
   * flush; git's stdout comes back raw on the same stream.
   */
  PostUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  PostUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  PostUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  PostUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  /**
   * POST /git-upload-pack: the request body travels on a sidechannel as pkt frames ending with a
   * flush; git's stdout comes back raw on the same stream.
   */
  postUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  postUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  postUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  postUploadPackWithSidechannel(argument: _gitaly_PostUploadPackWithSidechannelRequest, callback: grpc.requestCallback<_gitaly_PostUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface SmartHTTPServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * GET /info/refs?service=git-receive-pack, likewise for receive-pack.
   */
  InfoRefsReceivePack: grpc.handleServerStreamingCall<_gitaly_InfoRefsRequest__Output, _gitaly_InfoRefsResponse>;
  
  /**
   * GET /info/refs?service=git-upload-pack: `# service=git-upload-pack` pkt, flush, then the
   * advertisement of `git upload-pack --stateless-rpc --advertise-refs`.
   */
  InfoRefsUploadPack: grpc.handleServerStreamingCall<_gitaly_InfoRefsRequest__Output, _gitaly_InfoRefsResponse>;
  
  /**
   * POST /git-receive-pack: bidi; the first message carries no data.
   */
  PostReceivePack: grpc.handleBidiStreamingCall<_gitaly_PostReceivePackRequest__Output, _gitaly_PostReceivePackResponse>;
  
  /**
   * POST /git-upload-pack: the request body travels on a sidechannel as pkt frames ending with a
   * flush; git's stdout comes back raw on the same stream.
   */
  PostUploadPackWithSidechannel: grpc.handleUnaryCall<_gitaly_PostUploadPackWithSidechannelRequest__Output, _gitaly_PostUploadPackWithSidechannelResponse>;
  
}

export interface SmartHTTPServiceDefinition extends grpc.ServiceDefinition {
  InfoRefsReceivePack: MethodDefinition<_gitaly_InfoRefsRequest, _gitaly_InfoRefsResponse, _gitaly_InfoRefsRequest__Output, _gitaly_InfoRefsResponse__Output>
  InfoRefsUploadPack: MethodDefinition<_gitaly_InfoRefsRequest, _gitaly_InfoRefsResponse, _gitaly_InfoRefsRequest__Output, _gitaly_InfoRefsResponse__Output>
  PostReceivePack: MethodDefinition<_gitaly_PostReceivePackRequest, _gitaly_PostReceivePackResponse, _gitaly_PostReceivePackRequest__Output, _gitaly_PostReceivePackResponse__Output>
  PostUploadPackWithSidechannel: MethodDefinition<_gitaly_PostUploadPackWithSidechannelRequest, _gitaly_PostUploadPackWithSidechannelResponse, _gitaly_PostUploadPackWithSidechannelRequest__Output, _gitaly_PostUploadPackWithSidechannelResponse__Output>
}
