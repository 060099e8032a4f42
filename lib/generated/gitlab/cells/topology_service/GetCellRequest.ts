// Original file: protos/topology_service/cell_service.proto

import type { Long } from '@grpc/proto-loader';

export interface GetCellRequest {
  /**
   * Number 2, as in the service's proto; 1 is not used.
   */
  'cell_id'?: (number | string | Long);
}

export interface GetCellRequest__Output {
  /**
   * Number 2, as in the service's proto; 1 is not used.
   */
  'cell_id'?: (string);
}
