// Original file: protos/ssh.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { SSHReceivePackRequest as _gitaly_SSHReceivePackRequest, SSHReceivePackRequest__Output as _gitaly_SSHReceivePackRequest__Output } from '../gitaly/SSHReceivePackRequest.js';
import type { SSHReceivePackResponse as _gitaly_SSHReceivePackResponse, SSHReceivePackResponse__Output as _gitaly_SSHReceivePackResponse__Output } from '../gitaly/SSHReceivePackResponse.js';
import type { SSHUploadArchiveRequest as _gitaly_SSHUploadArchiveRequest, SSHUploadArchiveRequest__Output as _gitaly_SSHUploadArchiveRequest__Output } from '../gitaly/SSHUploadArchiveRequest.js';
import type { SSHUploadArchiveResponse as _gitaly_SSHUploadArchiveResponse, SSHUploadArchiveResponse__Output as _gitaly_SSHUploadArchiveResponse__Output } from '../gitaly/SSHUploadArchiveResponse.js';
import type { SSHUploadPackRequest as _gitaly_SSHUploadPackRequest, SSHUploadPackRequest__Output as _gitaly_SSHUploadPackRequest__Output } from '../gitaly/SSHUploadPackRequest.js';
import type { SSHUploadPackResponse as _gitaly_SSHUploadPackResponse, SSHUploadPackResponse__Output as _gitaly_SSHUploadPackResponse__Output } from '../gitaly/SSHUploadPackResponse.js';
import type { SSHUploadPackWithSidechannelRequest as _gitaly_SSHUploadPackWithSidechannelRequest, SSHUploadPackWithSidechannelRequest__Output as _gitaly_SSHUploadPackWithSidechannelRequest__Output } from '../gitaly/SSHUploadPackWithSidechannelRequest.js';
import type { SSHUploadPackWithSidechannelResponse as _gitaly_SSHUploadPackWithSidechannelResponse, SSHUploadPackWithSidechannelResponse__Output as _gitaly_SSHUploadPackWithSidechannelResponse__Output } from '../gitaly/SSHUploadPackWithSidechannelResponse.js';

export interface SSHServiceClient extends grpc.Client {
  /**
   * Bidirectional receive-pack (push).
   */
  SSHReceivePack(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHReceivePackRequest, _gitaly_SSHReceivePackResponse__Output>;
  SSHReceivePack(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHReceivePackRequest, _gitaly_SSHReceivePackResponse__Output>;
  /**
   * Bidirectional receive-pack (push).
   */
  sshReceivePack(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHReceivePackRequest, _gitaly_SSHReceivePackResponse__Output>;
  sshReceivePack(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHReceivePackRequest, _gitaly_SSHReceivePackResponse__Output>;
  
  /**
   * Bidirectional upload-archive (git archive --remote).
   */
  SSHUploadArchive(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadArchiveRequest, _gitaly_SSHUploadArchiveResponse__Output>;
  SSHUploadArchive(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadArchiveRequest, _gitaly_SSHUploadArchiveResponse__Output>;
  /**
   * Bidirectional upload-archive (git archive --remote).
   */
  sshUploadArchive(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadArchiveRequest, _gitaly_SSHUploadArchiveResponse__Output>;
  sshUploadArchive(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadArchiveRequest, _gitaly_SSHUploadArchiveResponse__Output>;
  
  /**
   * Bidirectional upload-pack (clone, fetch). Removed from Gitaly in 17.8 (gitaly!7510): current
   * Gitaly answers UNIMPLEMENTED "unknown method SSHUploadPack for service gitaly.SSHService".
   * Kept for Gitaly <= 17.7 (the bridge's "stream" mode); mock-gitaly serves it only with
   * legacyUploadPack: true.
   */
  SSHUploadPack(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadPackRequest, _gitaly_SSHUploadPackResponse__Output>;
  SSHUploadPack(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadPackRequest, _gitaly_SSHUploadPackResponse__Output>;
  /**
   * Bidirectional upload-pack (clone, fetch). Removed from Gitaly in 17.8 (gitaly!7510): current
   * Gitaly answers UNIMPLEMENTED "unknown method SSHUploadPack for service gitaly.SSHService".
   * Kept for Gitaly <= 17.7 (the bridge's "stream" mode); mock-gitaly serves it only with
   * legacyUploadPack: true.
   */
  sshUploadPack(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadPackRequest, _gitaly_SSHUploadPackResponse__Output>;
  sshUploadPack(options?: grpc.CallOptions): grpc.ClientDuplexStream<_gitaly_SSHUploadPackRequest, _gitaly_SSHUploadPackResponse__Output>;
  
  /**
   * Upload-pack whose data travels on a yamux sidechannel: the call carries the request and the
   * gitaly-sidechannel-id metadata; Gitaly opens a stream back on the caller's backchannel session
   * ("sidechannel" + 8-byte id, client answers "ok"), stdin goes as pkt-lines ending with a flush,
   * stdout/stderr come back as sideband bands 1/2, and the unary answer carries the statistics.
   */
  SSHUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  SSHUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  SSHUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  SSHUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Upload-pack whose data travels on a yamux sidechannel: the call carries the request and the
   * gitaly-sidechannel-id metadata; Gitaly opens a stream back on the caller's backchannel session
   * ("sidechannel" + 8-byte id, client answers "ok"), stdin goes as pkt-lines ending with a flush,
   * stdout/stderr come back as sideband bands 1/2, and the unary answer carries the statistics.
   */
  sshUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  sshUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  sshUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  sshUploadPackWithSidechannel(argument: _gitaly_SSHUploadPackWithSidechannelRequest, callback: grpc.requestCallback<_gitaly_SSHUploadPackWithSidechannelResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface SSHServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Bidirectional receive-pack (push).
   */
  SSHReceivePack: grpc.handleBidiStreamingCall<_gitaly_SSHReceivePackRequest__Output, _gitaly_SSHReceivePackResponse>;
  
  /**
   * Bidirectional upload-archive (git archive --remote).
   */
  SSHUploadArchive: grpc.handleBidiStreamingCall<_gitaly_SSHUploadArchiveRequest__Output, _gitaly_SSHUploadArchiveResponse>;
  
  /**
   * Bidirectional upload-pack (clone, fetch). Removed from Gitaly in 17.8 (gitaly!7510): current
   * Gitaly answers UNIMPLEMENTED "unknown method SSHUploadPack for service gitaly.SSHService".
   * Kept for Gitaly <= 17.7 (the bridge's "stream" mode); mock-gitaly serves it only with
   * legacyUploadPack: true.
   */
  SSHUploadPack: grpc.handleBidiStreamingCall<_gitaly_SSHUploadPackRequest__Output, _gitaly_SSHUploadPackResponse>;
  
  /**
   * Upload-pack whose data travels on a yamux sidechannel: the call carries the request and the
   * gitaly-sidechannel-id metadata; Gitaly opens a stream back on the caller's backchannel session
   * ("sidechannel" + 8-byte id, client answers "ok"), stdin goes as pkt-lines ending with a flush,
   * stdout/stderr come back as sideband bands 1/2, and the unary answer carries the statistics.
   */
  SSHUploadPackWithSidechannel: grpc.handleUnaryCall<_gitaly_SSHUploadPackWithSidechannelRequest__Output, _gitaly_SSHUploadPackWithSidechannelResponse>;
  
}

export interface SSHServiceDefinition extends grpc.ServiceDefinition {
  SSHReceivePack: MethodDefinition<_gitaly_SSHReceivePackRequest, _gitaly_SSHReceivePackResponse, _gitaly_SSHReceivePackRequest__Output, _gitaly_SSHReceivePackResponse__Output>
  SSHUploadArchive: MethodDefinition<_gitaly_SSHUploadArchiveRequest, _gitaly_SSHUploadArchiveResponse, _gitaly_SSHUploadArchiveRequest__Output, _gitaly_SSHUploadArchiveResponse__Output>
  SSHUploadPack: MethodDefinition<_gitaly_SSHUploadPackRequest, _gitaly_SSHUploadPackResponse, _gitaly_SSHUploadPackRequest__Output, _gitaly_SSHUploadPackResponse__Output>
  SSHUploadPackWithSidechannel: MethodDefinition<_gitaly_SSHUploadPackWithSidechannelRequest, _gitaly_SSHUploadPackWithSidechannelResponse, _gitaly_SSHUploadPackWithSidechannelRequest__Output, _gitaly_SSHUploadPackWithSidechannelResponse__Output>
}
