// Original file: protos/topology_service/cell_service.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetCellRequest as _gitlab_cells_topology_service_GetCellRequest, GetCellRequest__Output as _gitlab_cells_topology_service_GetCellRequest__Output } from '../../../gitlab/cells/topology_service/GetCellRequest.js';
import type { GetCellResponse as _gitlab_cells_topology_service_GetCellResponse, GetCellResponse__Output as _gitlab_cells_topology_service_GetCellResponse__Output } from '../../../gitlab/cells/topology_service/GetCellResponse.js';

export interface CellServiceClient extends grpc.Client {
  /**
   * Rails asks for its own cell (sequence ranges). NOT_FOUND for an unknown id. Its
   * authorization rule is not visible in the descriptors we have.
   */
  GetCell(argument: _gitlab_cells_topology_service_GetCellRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  GetCell(argument: _gitlab_cells_topology_service_GetCellRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  GetCell(argument: _gitlab_cells_topology_service_GetCellRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  GetCell(argument: _gitlab_cells_topology_service_GetCellRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Rails asks for its own cell (sequence ranges). NOT_FOUND for an unknown id. Its
   * authorization rule is not visible in the descriptors we have.
   */
  getCell(argument: _gitlab_cells_topology_service_GetCellRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  getCell(argument: _gitlab_cells_topology_service_GetCellRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  getCell(argument: _gitlab_cells_topology_service_GetCellRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  getCell(argument: _gitlab_cells_topology_service_GetCellRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CellServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Rails asks for its own cell (sequence ranges). NOT_FOUND for an unknown id. Its
   * authorization rule is not visible in the descriptors we have.
   */
  GetCell: grpc.handleUnaryCall<_gitlab_cells_topology_service_GetCellRequest__Output, _gitlab_cells_topology_service_GetCellResponse>;
  
}

export interface CellServiceDefinition extends grpc.ServiceDefinition {
  GetCell: MethodDefinition<_gitlab_cells_topology_service_GetCellRequest, _gitlab_cells_topology_service_GetCellResponse, _gitlab_cells_topology_service_GetCellRequest__Output, _gitlab_cells_topology_service_GetCellResponse__Output>
}
