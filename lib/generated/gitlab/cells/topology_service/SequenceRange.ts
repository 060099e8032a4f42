// Original file: protos/topology_service/cell_info.proto

import type { Long } from '@grpc/proto-loader';

export interface SequenceRange {
  'minval'?: (number | string | Long);
  'maxval'?: (number | string | Long);
}

export interface SequenceRange__Output {
  'minval'?: (string);
  'maxval'?: (string);
}
