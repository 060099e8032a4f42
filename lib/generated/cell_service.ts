import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { CellInfo as _gitlab_cells_topology_service_CellInfo, CellInfo__Output as _gitlab_cells_topology_service_CellInfo__Output } from './gitlab/cells/topology_service/CellInfo.js';
import type { CellServiceClient as _gitlab_cells_topology_service_CellServiceClient, CellServiceDefinition as _gitlab_cells_topology_service_CellServiceDefinition } from './gitlab/cells/topology_service/CellService.js';
import type { GetCellRequest as _gitlab_cells_topology_service_GetCellRequest, GetCellRequest__Output as _gitlab_cells_topology_service_GetCellRequest__Output } from './gitlab/cells/topology_service/GetCellRequest.js';
import type { GetCellResponse as _gitlab_cells_topology_service_GetCellResponse, GetCellResponse__Output as _gitlab_cells_topology_service_GetCellResponse__Output } from './gitlab/cells/topology_service/GetCellResponse.js';
import type { GetCellsRequest as _gitlab_cells_topology_service_GetCellsRequest, GetCellsRequest__Output as _gitlab_cells_topology_service_GetCellsRequest__Output } from './gitlab/cells/topology_service/GetCellsRequest.js';
import type { GetCellsResponse as _gitlab_cells_topology_service_GetCellsResponse, GetCellsResponse__Output as _gitlab_cells_topology_service_GetCellsResponse__Output } from './gitlab/cells/topology_service/GetCellsResponse.js';
import type { SequenceRange as _gitlab_cells_topology_service_SequenceRange, SequenceRange__Output as _gitlab_cells_topology_service_SequenceRange__Output } from './gitlab/cells/topology_service/SequenceRange.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gitlab: {
    cells: {
      topology_service: {
        CellInfo: MessageTypeDefinition<_gitlab_cells_topology_service_CellInfo, _gitlab_cells_topology_service_CellInfo__Output>
        CellService: SubtypeConstructor<typeof grpc.Client, _gitlab_cells_topology_service_CellServiceClient> & { service: _gitlab_cells_topology_service_CellServiceDefinition }
        GetCellRequest: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellRequest, _gitlab_cells_topology_service_GetCellRequest__Output>
        GetCellResponse: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellResponse, _gitlab_cells_topology_service_GetCellResponse__Output>
        GetCellsRequest: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellsRequest, _gitlab_cells_topology_service_GetCellsRequest__Output>
        GetCellsResponse: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellsResponse, _gitlab_cells_topology_service_GetCellsResponse__Output>
        SequenceRange: MessageTypeDefinition<_gitlab_cells_topology_service_SequenceRange, _gitlab_cells_topology_service_SequenceRange__Output>
      }
    }
  }
}

