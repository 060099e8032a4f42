// Original file: protos/topology_service/health_service.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { LivenessProbeRequest as _gitlab_cells_topology_service_LivenessProbeRequest, LivenessProbeRequest__Output as _gitlab_cells_topology_service_LivenessProbeRequest__Output } from '../../../gitlab/cells/topology_service/LivenessProbeRequest.js';
import type { LivenessProbeResponse as _gitlab_cells_topology_service_LivenessProbeResponse, LivenessProbeResponse__Output as _gitlab_cells_topology_service_LivenessProbeResponse__Output } from '../../../gitlab/cells/topology_service/LivenessProbeResponse.js';
import type { ReadinessProbeRequest as _gitlab_cells_topology_service_ReadinessProbeRequest, ReadinessProbeRequest__Output as _gitlab_cells_topology_service_ReadinessProbeRequest__Output } from '../../../gitlab/cells/topology_service/ReadinessProbeRequest.js';
import type { ReadinessProbeResponse as _gitlab_cells_topology_service_ReadinessProbeResponse, ReadinessProbeResponse__Output as _gitlab_cells_topology_service_ReadinessProbeResponse__Output } from '../../../gitlab/cells/topology_service/ReadinessProbeResponse.js';

export interface HealthServiceClient extends grpc.Client {
  /**
   * Alive (or should be restarted).
   */
  LivenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  LivenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  LivenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  LivenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Alive (or should be restarted).
   */
  livenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  livenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  livenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  livenessProbe(argument: _gitlab_cells_topology_service_LivenessProbeRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_LivenessProbeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Ready to answer requests.
   */
  ReadinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  ReadinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  ReadinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  ReadinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Ready to answer requests.
   */
  readinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  readinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  readinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  readinessProbe(argument: _gitlab_cells_topology_service_ReadinessProbeRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_ReadinessProbeResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface HealthServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Alive (or should be restarted).
   */
  LivenessProbe: grpc.handleUnaryCall<_gitlab_cells_topology_service_LivenessProbeRequest__Output, _gitlab_cells_topology_service_LivenessProbeResponse>;
  
  /**
   * Ready to answer requests.
   */
  ReadinessProbe: grpc.handleUnaryCall<_gitlab_cells_topology_service_ReadinessProbeRequest__Output, _gitlab_cells_topology_service_ReadinessProbeResponse>;
  
}

export interface HealthServiceDefinition extends grpc.ServiceDefinition {
  LivenessProbe: MethodDefinition<_gitlab_cells_topology_service_LivenessProbeRequest, _gitlab_cells_topology_service_LivenessProbeResponse, _gitlab_cells_topology_service_LivenessProbeRequest__Output, _gitlab_cells_topology_service_LivenessProbeResponse__Output>
  ReadinessProbe: MethodDefinition<_gitlab_cells_topology_service_ReadinessProbeRequest, _gitlab_cells_topology_service_ReadinessProbeResponse, _gitlab_cells_topology_service_ReadinessProbeRequest__Output, _gitlab_cells_topology_service_ReadinessProbeResponse__Output>
}
