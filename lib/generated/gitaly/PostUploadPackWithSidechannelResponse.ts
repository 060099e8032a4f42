// Original file: protos/smarthttp.proto

import type { PackfileNegotiationStatistics as _gitaly_PackfileNegotiationStatistics, PackfileNegotiationStatistics__Output as _gitaly_PackfileNegotiationStatistics__Output } from '../gitaly/PackfileNegotiationStatistics.js';

export interface PostUploadPackWithSidechannelResponse {
  'packfile_negotiation_statistics'?: (_gitaly_PackfileNegotiationStatistics | null);
}

export interface PostUploadPackWithSidechannelResponse__Output {
  'packfile_negotiation_statistics'?: (_gitaly_PackfileNegotiationStatistics__Output);
}
