// Original file: protos/topology_service/classify_service.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ClassifyRequest as _gitlab_cells_topology_service_ClassifyRequest, ClassifyRequest__Output as _gitlab_cells_topology_service_ClassifyRequest__Output } from '../../../gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse as _gitlab_cells_topology_service_ClassifyResponse, ClassifyResponse__Output as _gitlab_cells_topology_service_ClassifyResponse__Output } from '../../../gitlab/cells/topology_service/ClassifyResponse.js';
import type { GetCellsRequest as _gitlab_cells_topology_service_GetCellsRequest, GetCellsRequest__Output as _gitlab_cells_topology_service_GetCellsRequest__Output } from '../../../gitlab/cells/topology_service/GetCellsRequest.js';
import type { GetCellsResponse as _gitlab_cells_topology_service_GetCellsResponse, GetCellsResponse__Output as _gitlab_cells_topology_service_GetCellsResponse__Output } from '../../../gitlab/cells/topology_service/GetCellsResponse.js';

/**
 * Authorization (the service's method option 90000, left out here, see ../README.md): GetCells
 * any authenticated caller; Classify any cell, any router, any admin.
 */
export interface ClassifyServiceClient extends grpc.Client {
  Classify(argument: _gitlab_cells_topology_service_ClassifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  Classify(argument: _gitlab_cells_topology_service_ClassifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  Classify(argument: _gitlab_cells_topology_service_ClassifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  Classify(argument: _gitlab_cells_topology_service_ClassifyRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  classify(argument: _gitlab_cells_topology_service_ClassifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  classify(argument: _gitlab_cells_topology_service_ClassifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  classify(argument: _gitlab_cells_topology_service_ClassifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  classify(argument: _gitlab_cells_topology_service_ClassifyRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_ClassifyResponse__Output>): grpc.ClientUnaryCall;
  
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Authorization (the service's method option 90000, left out here, see ../README.md): GetCells
 * any authenticated caller; Classify any cell, any router, any admin.
 */
export interface ClassifyServiceHandlers extends grpc.UntypedServiceImplementation {
  Classify: grpc.handleUnaryCall<_gitlab_cells_topology_service_ClassifyRequest__Output, _gitlab_cells_topology_service_ClassifyResponse>;
  
  GetCells: grpc.handleUnaryCall<_gitlab_cells_topology_service_GetCellsRequest__Output, _gitlab_cells_topology_service_GetCellsResponse>;
  
}

export interface ClassifyServiceDefinition extends grpc.ServiceDefinition {
  Classify: MethodDefinition<_gitlab_cells_topology_service_ClassifyRequest, _gitlab_cells_topology_service_ClassifyResponse, _gitlab_cells_topology_service_ClassifyRequest__Output, _gitlab_cells_topology_service_ClassifyResponse__Output>
  GetCells: MethodDefinition<_gitlab_cells_topology_service_GetCellsRequest, _gitlab_cells_topology_service_GetCellsResponse, _gitlab_cells_topology_service_GetCellsRequest__Output, _gitlab_cells_topology_service_GetCellsResponse__Output>
}
