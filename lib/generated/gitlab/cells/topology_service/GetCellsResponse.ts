// Original file: protos/topology_service/cell_info.proto

import type { CellInfo as _gitlab_cells_topology_service_CellInfo, CellInfo__Output as _gitlab_cells_topology_service_CellInfo__Output } from '../../../gitlab/cells/topology_service/CellInfo.js';

export interface GetCellsResponse {
  'cells'?: (_gitlab_cells_topology_service_CellInfo)[];
}

export interface GetCellsResponse__Output {
  'cells'?: (_gitlab_cells_topology_service_CellInfo__Output)[];
}
