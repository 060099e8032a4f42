import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { CellInfo as _gitlab_cells_topology_service_CellInfo, CellInfo__Output as _gitlab_cells_topology_service_CellInfo__Output } from './gitlab/cells/topology_service/CellInfo.js';
import type { ClassifyRequest as _gitlab_cells_topology_service_ClassifyRequest, ClassifyRequest__Output as _gitlab_cells_topology_service_ClassifyRequest__Output } from './gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse as _gitlab_cells_topology_service_ClassifyResponse, ClassifyResponse__Output as _gitlab_cells_topology_service_ClassifyResponse__Output } from './gitlab/cells/topology_service/ClassifyResponse.js';
import type { ClassifyServiceClient as _gitlab_cells_topology_service_ClassifyServiceClient, ClassifyServiceDefinition as _gitlab_cells_topology_service_ClassifyServiceDefinition } from './gitlab/cells/topology_service/ClassifyService.js';
import type { GetCellsRequest as _gitlab_cells_topology_service_GetCellsRequest, GetCellsRequest__Output as _gitlab_cells_topology_service_GetCellsRequest__Output } from './gitlab/cells/topology_service/GetCellsRequest.js';
import type { GetCellsResponse as _gitlab_cells_topology_service_GetCellsResponse, GetCellsResponse__Output as _gitlab_cells_topology_service_GetCellsResponse__Output } from './gitlab/cells/topology_service/GetCellsResponse.js';
import type { ProxyInfo as _gitlab_cells_topology_service_ProxyInfo, ProxyInfo__Output as _gitlab_cells_topology_service_ProxyInfo__Output } from './gitlab/cells/topology_service/ProxyInfo.js';
import type { SequenceRange as _gitlab_cells_topology_service_SequenceRange, SequenceRange__Output as _gitlab_cells_topology_service_SequenceRange__Output } from './gitlab/cells/topology_service/SequenceRange.js';
import type { Claim as _gitlab_cells_topology_service_types_v1_Claim, Claim__Output as _gitlab_cells_topology_service_types_v1_Claim__Output } from './gitlab/cells/topology_service/types/v1/Claim.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gitlab: {
    cells: {
      topology_service: {
        CellInfo: MessageTypeDefinition<_gitlab_cells_topology_service_CellInfo, _gitlab_cells_topology_service_CellInfo__Output>
        ClassifyAction: EnumTypeDefinition
        ClassifyRequest: MessageTypeDefinition<_gitlab_cells_topology_service_ClassifyRequest, _gitlab_cells_topology_service_ClassifyRequest__Output>
        ClassifyResponse: MessageTypeDefinition<_gitlab_cells_topology_service_ClassifyResponse, _gitlab_cells_topology_service_ClassifyResponse__Output>
        /**
         * Authorization (the service's method option 90000, left out here, see ../README.md): GetCells
         * any authenticated caller; Classify any cell, any router, any admin.
         */
        ClassifyService: SubtypeConstructor<typeof grpc.Client, _gitlab_cells_topology_service_ClassifyServiceClient> & { service: _gitlab_cells_topology_service_ClassifyServiceDefinition }
        ClassifyType: EnumTypeDefinition
        GetCellsRequest: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellsRequest, _gitlab_cells_topology_service_GetCellsRequest__Output>
        GetCellsResponse: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellsResponse, _gitlab_cells_topology_service_GetCellsResponse__Output>
        ProxyInfo: MessageTypeDefinition<_gitlab_cells_topology_service_ProxyInfo, _gitlab_cells_topology_service_ProxyInfo__Output>
        SequenceRange: MessageTypeDefinition<_gitlab_cells_topology_service_SequenceRange, _gitlab_cells_topology_service_SequenceRange__Output>
        types: {
          v1: {
            Claim: MessageTypeDefinition<_gitlab_cells_topology_service_types_v1_Claim, _gitlab_cells_topology_service_types_v1_Claim__Output>
            ClaimType: EnumTypeDefinition
          }
        }
      }
    }
  }
}

