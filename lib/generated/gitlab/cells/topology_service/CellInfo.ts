// Original file: protos/topology_service/cell_info.proto

import type { SequenceRange as _gitlab_cells_topology_service_SequenceRange, SequenceRange__Output as _gitlab_cells_topology_service_SequenceRange__Output } from '../../../gitlab/cells/topology_service/SequenceRange.js';
import type { Long } from '@grpc/proto-loader';

export interface CellInfo {
  /**
   * The legacy cell is 1; new cells start at 2.
   */
  'id'?: (number | string | Long);
  /**
   * Only the oldest revision has it; kept so that both old and new clients read our answers.
   */
  'name'?: (string);
  /**
   * A bare host ("cell-2.example.com") or host:port. gitlab-shell keeps only the host.
   */
  'address'?: (string);
  /**
   * The prefix of this cell's session cookies ("cell-2").
   */
  'session_prefix'?: (string);
  /**
   * The first of sequence_ranges (older clients read this one).
   */
  'sequence_range'?: (_gitlab_cells_topology_service_SequenceRange | null);
  'sequence_ranges'?: (_gitlab_cells_topology_service_SequenceRange)[];
}

export interface CellInfo__Output {
  /**
   * The legacy cell is 1; new cells start at 2.
   */
  'id'?: (string);
  /**
   * Only the oldest revision has it; kept so that both old and new clients read our answers.
   */
  'name'?: (string);
  /**
   * A bare host ("cell-2.example.com") or host:port. gitlab-shell keeps only the host.
   */
  'address'?: (string);
  /**
   * The prefix of this cell's session cookies ("cell-2").
   */
  'session_prefix'?: (string);
  /**
   * The first of sequence_ranges (older clients read this one).
   */
  'sequence_range'?: (_gitlab_cells_topology_service_SequenceRange__Output);
  'sequence_ranges'?: (_gitlab_cells_topology_service_SequenceRange__Output)[];
}
