// Original file: protos/ssh.proto

import type { PackfileNegotiationStatistics as _gitaly_PackfileNegotiationStatistics, PackfileNegotiationStatistics__Output as _gitaly_PackfileNegotiationStatistics__Output } from '../gitaly/PackfileNegotiationStatistics.js';

export interface SSHUploadPackWithSidechannelResponse {
  'packfile_negotiation_statistics'?: (_gitaly_PackfileNegotiationStatistics | null);
}

export interface SSHUploadPackWithSidechannelResponse__Output {
  'packfile_negotiation_statistics'?: (_gitaly_PackfileNegotiationStatistics__Output);
}
