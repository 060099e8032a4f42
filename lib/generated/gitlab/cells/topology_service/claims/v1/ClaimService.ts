// Original file: protos/topology_service/claims/v1/claim_service.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { BeginUpdateRequest as _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, BeginUpdateRequest__Output as _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/BeginUpdateRequest.js';
import type { BeginUpdateResponse as _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse, BeginUpdateResponse__Output as _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/BeginUpdateResponse.js';
import type { CommitUpdateRequest as _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, CommitUpdateRequest__Output as _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/CommitUpdateRequest.js';
import type { CommitUpdateResponse as _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse, CommitUpdateResponse__Output as _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/CommitUpdateResponse.js';
import type { GetCellsRequest as _gitlab_cells_topology_service_GetCellsRequest, GetCellsRequest__Output as _gitlab_cells_topology_service_GetCellsRequest__Output } from '../../../../../gitlab/cells/topology_service/GetCellsRequest.js';
import type { GetCellsResponse as _gitlab_cells_topology_service_GetCellsResponse, GetCellsResponse__Output as _gitlab_cells_topology_service_GetCellsResponse__Output } from '../../../../../gitlab/cells/topology_service/GetCellsResponse.js';
import type { GetRecordRequest as _gitlab_cells_topology_service_claims_v1_GetRecordRequest, GetRecordRequest__Output as _gitlab_cells_topology_service_claims_v1_GetRecordRequest__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/GetRecordRequest.js';
import type { GetRecordResponse as _gitlab_cells_topology_service_claims_v1_GetRecordResponse, GetRecordResponse__Output as _gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/GetRecordResponse.js';
import type { ListLeasesRequest as _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, ListLeasesRequest__Output as _gitlab_cells_topology_service_claims_v1_ListLeasesRequest__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/ListLeasesRequest.js';
import type { ListLeasesResponse as _gitlab_cells_topology_service_claims_v1_ListLeasesResponse, ListLeasesResponse__Output as _gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/ListLeasesResponse.js';
import type { ListRecordsRequest as _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, ListRecordsRequest__Output as _gitlab_cells_topology_service_claims_v1_ListRecordsRequest__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/ListRecordsRequest.js';
import type { ListRecordsResponse as _gitlab_cells_topology_service_claims_v1_ListRecordsResponse, ListRecordsResponse__Output as _gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/ListRecordsResponse.js';
import type { RollbackUpdateRequest as _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, RollbackUpdateRequest__Output as _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/RollbackUpdateRequest.js';
import type { RollbackUpdateResponse as _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse, RollbackUpdateResponse__Output as _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output } from '../../../../../gitlab/cells/topology_service/claims/v1/RollbackUpdateResponse.js';

/**
 * Authorization (method option 90000, left out here): GetCells any authenticated caller;
 * GetRecord admins; the others the matching cell only, or admins.
 */
export interface ClaimServiceClient extends grpc.Client {
  BeginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  BeginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  BeginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  BeginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  beginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  beginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  beginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  beginUpdate(argument: _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>): grpc.ClientUnaryCall;
  
  CommitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  CommitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  CommitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  CommitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  commitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  commitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  commitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  commitUpdate(argument: _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>): grpc.ClientUnaryCall;
  
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  GetCells(argument: _gitlab_cells_topology_service_GetCellsRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  getCells(argument: _gitlab_cells_topology_service_GetCellsRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_GetCellsResponse__Output>): grpc.ClientUnaryCall;
  
  GetRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  GetRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  GetRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  GetRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _gitlab_cells_topology_service_claims_v1_GetRecordRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>): grpc.ClientUnaryCall;
  
  ListLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  ListLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  ListLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  ListLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  listLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  listLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  listLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  listLeases(argument: _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>): grpc.ClientUnaryCall;
  
  ListRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  ListRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  ListRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  ListRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  
  RollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  RollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  RollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  RollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  rollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  rollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  rollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  rollbackUpdate(argument: _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, callback: grpc.requestCallback<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Authorization (method option 90000, left out here): GetCells any authenticated caller;
 * GetRecord admins; the others the matching cell only, or admins.
 */
export interface ClaimServiceHandlers extends grpc.UntypedServiceImplementation {
  BeginUpdate: grpc.handleUnaryCall<_gitlab_cells_topology_service_claims_v1_BeginUpdateRequest__Output, _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse>;
  
  CommitUpdate: grpc.handleUnaryCall<_gitlab_cells_topology_service_claims_v1_CommitUpdateRequest__Output, _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse>;
  
  GetCells: grpc.handleUnaryCall<_gitlab_cells_topology_service_GetCellsRequest__Output, _gitlab_cells_topology_service_GetCellsResponse>;
  
  GetRecord: grpc.handleUnaryCall<_gitlab_cells_topology_service_claims_v1_GetRecordRequest__Output, _gitlab_cells_topology_service_claims_v1_GetRecordResponse>;
  
  ListLeases: grpc.handleUnaryCall<_gitlab_cells_topology_service_claims_v1_ListLeasesRequest__Output, _gitlab_cells_topology_service_claims_v1_ListLeasesResponse>;
  
  ListRecords: grpc.handleUnaryCall<_gitlab_cells_topology_service_claims_v1_ListRecordsRequest__Output, _gitlab_cells_topology_service_claims_v1_ListRecordsResponse>;
  
  RollbackUpdate: grpc.handleUnaryCall<_gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest__Output, _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse>;
  
}

export interface ClaimServiceDefinition extends grpc.ServiceDefinition {
  BeginUpdate: MethodDefinition<_gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse, _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest__Output, _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>
  CommitUpdate: MethodDefinition<_gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse, _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest__Output, _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>
  GetCells: MethodDefinition<_gitlab_cells_topology_service_GetCellsRequest, _gitlab_cells_topology_service_GetCellsResponse, _gitlab_cells_topology_service_GetCellsRequest__Output, _gitlab_cells_topology_service_GetCellsResponse__Output>
  GetRecord: MethodDefinition<_gitlab_cells_topology_service_claims_v1_GetRecordRequest, _gitlab_cells_topology_service_claims_v1_GetRecordResponse, _gitlab_cells_topology_service_claims_v1_GetRecordRequest__Output, _gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>
  ListLeases: MethodDefinition<_gitlab_cells_topology_service_claims_v1_ListLeasesRequest, _gitlab_cells_topology_service_claims_v1_ListLeasesResponse, _gitlab_cells_topology_service_claims_v1_ListLeasesRequest__Output, _gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>
  ListRecords: MethodDefinition<_gitlab_cells_topology_service_claims_v1_ListRecordsRequest, _gitlab_cells_topology_service_claims_v1_ListRecordsResponse, _gitlab_cells_topology_service_claims_v1_ListRecordsRequest__Output, _gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>
  RollbackUpdate: MethodDefinition<_gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse, _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest__Output, _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>
}
