// Original file: protos/topology_service/claims/v1/claim_service.proto

import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from '../../../../../google/protobuf/Any.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../../../../google/protobuf/Timestamp.js';
import type { Long } from '@grpc/proto-loader';

export interface ListLeasesRequest {
  'cell_id'?: (number | string | Long);
  'next'?: (_google_protobuf_Any | null);
  'limit'?: (number);
  'created_after'?: (_google_protobuf_Timestamp | null);
  '_next'?: "next";
  '_limit'?: "limit";
  '_created_after'?: "created_after";
}

export interface ListLeasesRequest__Output {
  'cell_id'?: (string);
  'next'?: (_google_protobuf_Any__Output);
  'limit'?: (number);
  'created_after'?: (_google_protobuf_Timestamp__Output);
  '_next'?: "next";
  '_limit'?: "limit";
  '_created_after'?: "created_after";
}
