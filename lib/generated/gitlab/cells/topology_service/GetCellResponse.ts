// Original file: protos/topology_service/cell_service.proto

import type { CellInfo as _gitlab_cells_topology_service_CellInfo, CellInfo__Output as _gitlab_cells_topology_service_CellInfo__Output } from '../../../gitlab/cells/topology_service/CellInfo.js';

export interface GetCellResponse {
  'cell_info'?: (_gitlab_cells_topology_service_CellInfo | null);
}

export interface GetCellResponse__Output {
  'cell_info'?: (_gitlab_cells_topology_service_CellInfo__Output);
}
