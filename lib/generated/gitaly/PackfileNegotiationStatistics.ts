// Original file: protos/packfile.proto

import type { Long } from '@grpc/proto-loader';

export interface PackfileNegotiationStatistics {
  'payload_size'?: (number | string | Long);
  'packets'?: (number | string | Long);
  'caps'?: (string)[];
  'wants'?: (number | string | Long);
  'haves'?: (number | string | Long);
  'shallows'?: (number | string | Long);
  'deepen'?: (string);
  'filter'?: (string);
}

export interface PackfileNegotiationStatistics__Output {
  'payload_size'?: (string);
  'packets'?: (string);
  'caps'?: (string)[];
  'wants'?: (string);
  'haves'?: (string);
  'shallows'?: (string);
  'deepen'?: (string);
  'filter'?: (string);
}
