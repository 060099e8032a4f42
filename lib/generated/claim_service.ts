import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { CellInfo as _gitlab_cells_topology_service_CellInfo, CellInfo__Output as _gitlab_cells_topology_service_CellInfo__Output } from './gitlab/cells/topology_service/CellInfo.js';
import type { GetCellsRequest as _gitlab_cells_topology_service_GetCellsRequest, GetCellsRequest__Output as _gitlab_cells_topology_service_GetCellsRequest__Output } from './gitlab/cells/topology_service/GetCellsRequest.js';
import type { GetCellsResponse as _gitlab_cells_topology_service_GetCellsResponse, GetCellsResponse__Output as _gitlab_cells_topology_service_GetCellsResponse__Output } from './gitlab/cells/topology_service/GetCellsResponse.js';
import type { SequenceRange as _gitlab_cells_topology_service_SequenceRange, SequenceRange__Output as _gitlab_cells_topology_service_SequenceRange__Output } from './gitlab/cells/topology_service/SequenceRange.js';
import type { BeginUpdateRequest as _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, BeginUpdateRequest__Output as _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest__Output } from './gitlab/cells/topology_service/claims/v1/BeginUpdateRequest.js';
import type { BeginUpdateResponse as _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse, BeginUpdateResponse__Output as _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output } from './gitlab/cells/topology_service/claims/v1/BeginUpdateResponse.js';
import type { Bucket as _gitlab_cells_topology_service_claims_v1_Bucket, Bucket__Output as _gitlab_cells_topology_service_claims_v1_Bucket__Output } from './gitlab/cells/topology_service/claims/v1/Bucket.js';
import type { ClaimServiceClient as _gitlab_cells_topology_service_claims_v1_ClaimServiceClient, ClaimServiceDefinition as _gitlab_cells_topology_service_claims_v1_ClaimServiceDefinition } from './gitlab/cells/topology_service/claims/v1/ClaimService.js';
import type { CommitUpdateRequest as _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, CommitUpdateRequest__Output as _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest__Output } from './gitlab/cells/topology_service/claims/v1/CommitUpdateRequest.js';
import type { CommitUpdateResponse as _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse, CommitUpdateResponse__Output as _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output } from './gitlab/cells/topology_service/claims/v1/CommitUpdateResponse.js';
import type { GetRecordRequest as _gitlab_cells_topology_service_claims_v1_GetRecordRequest, GetRecordRequest__Output as _gitlab_cells_topology_service_claims_v1_GetRecordRequest__Output } from './gitlab/cells/topology_service/claims/v1/GetRecordRequest.js';
import type { GetRecordResponse as _gitlab_cells_topology_service_claims_v1_GetRecordResponse, GetRecordResponse__Output as _gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output } from './gitlab/cells/topology_service/claims/v1/GetRecordResponse.js';
import type { LeaseRecord as _gitlab_cells_topology_service_claims_v1_LeaseRecord, LeaseRecord__Output as _gitlab_cells_topology_service_claims_v1_LeaseRecord__Output } from './gitlab/cells/topology_service/claims/v1/LeaseRecord.js';
import type { ListLeasesRequest as _gitlab_cells_topology_service_claims_v1_ListLeasesRequest, ListLeasesRequest__Output as _gitlab_cells_topology_service_claims_v1_ListLeasesRequest__Output } from './gitlab/cells/topology_service/claims/v1/ListLeasesRequest.js';
import type { ListLeasesResponse as _gitlab_cells_topology_service_claims_v1_ListLeasesResponse, ListLeasesResponse__Output as _gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output } from './gitlab/cells/topology_service/claims/v1/ListLeasesResponse.js';
import type { ListRecordsRequest as _gitlab_cells_topology_service_claims_v1_ListRecordsRequest, ListRecordsRequest__Output as _gitlab_cells_topology_service_claims_v1_ListRecordsRequest__Output } from './gitlab/cells/topology_service/claims/v1/ListRecordsRequest.js';
import type { ListRecordsResponse as _gitlab_cells_topology_service_claims_v1_ListRecordsResponse, ListRecordsResponse__Output as _gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output } from './gitlab/cells/topology_service/claims/v1/ListRecordsResponse.js';
import type { Metadata as _gitlab_cells_topology_service_claims_v1_Metadata, Metadata__Output as _gitlab_cells_topology_service_claims_v1_Metadata__Output } from './gitlab/cells/topology_service/claims/v1/Metadata.js';
import type { Record as _gitlab_cells_topology_service_claims_v1_Record, Record__Output as _gitlab_cells_topology_service_claims_v1_Record__Output } from './gitlab/cells/topology_service/claims/v1/Record.js';
import type { RollbackUpdateRequest as _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, RollbackUpdateRequest__Output as _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest__Output } from './gitlab/cells/topology_service/claims/v1/RollbackUpdateRequest.js';
import type { RollbackUpdateResponse as _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse, RollbackUpdateResponse__Output as _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output } from './gitlab/cells/topology_service/claims/v1/RollbackUpdateResponse.js';
import type { Source as _gitlab_cells_topology_service_claims_v1_Source, Source__Output as _gitlab_cells_topology_service_claims_v1_Source__Output } from './gitlab/cells/topology_service/claims/v1/Source.js';
import type { Subject as _gitlab_cells_topology_service_claims_v1_Subject, Subject__Output as _gitlab_cells_topology_service_claims_v1_Subject__Output } from './gitlab/cells/topology_service/claims/v1/Subject.js';
import type { Claim as _gitlab_cells_topology_service_types_v1_Claim, Claim__Output as _gitlab_cells_topology_service_types_v1_Claim__Output } from './gitlab/cells/topology_service/types/v1/Claim.js';
import type { UUID as _gitlab_cells_topology_service_types_v1_UUID, UUID__Output as _gitlab_cells_topology_service_types_v1_UUID__Output } from './gitlab/cells/topology_service/types/v1/UUID.js';
import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from './google/protobuf/Any.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from './google/protobuf/Timestamp.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gitlab: {
    cells: {
      topology_service: {
        CellInfo: MessageTypeDefinition<_gitlab_cells_topology_service_CellInfo, _gitlab_cells_topology_service_CellInfo__Output>
        GetCellsRequest: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellsRequest, _gitlab_cells_topology_service_GetCellsRequest__Output>
        GetCellsResponse: MessageTypeDefinition<_gitlab_cells_topology_service_GetCellsResponse, _gitlab_cells_topology_service_GetCellsResponse__Output>
        SequenceRange: MessageTypeDefinition<_gitlab_cells_topology_service_SequenceRange, _gitlab_cells_topology_service_SequenceRange__Output>
        claims: {
          v1: {
            BeginUpdateRequest: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_BeginUpdateRequest, _gitlab_cells_topology_service_claims_v1_BeginUpdateRequest__Output>
            BeginUpdateResponse: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_BeginUpdateResponse, _gitlab_cells_topology_service_claims_v1_BeginUpdateResponse__Output>
            Bucket: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_Bucket, _gitlab_cells_topology_service_claims_v1_Bucket__Output>
            /**
             * Authorization (method option 90000, left out here): GetCells any authenticated caller;
             * GetRecord admins; the others the matching cell only, or admins.
             */
            ClaimService: SubtypeConstructor<typeof grpc.Client, _gitlab_cells_topology_service_claims_v1_ClaimServiceClient> & { service: _gitlab_cells_topology_service_claims_v1_ClaimServiceDefinition }
            CommitUpdateRequest: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_CommitUpdateRequest, _gitlab_cells_topology_service_claims_v1_CommitUpdateRequest__Output>
            CommitUpdateResponse: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_CommitUpdateResponse, _gitlab_cells_topology_service_claims_v1_CommitUpdateResponse__Output>
            GetRecordRequest: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_GetRecordRequest, _gitlab_cells_topology_service_claims_v1_GetRecordRequest__Output>
            GetRecordResponse: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_GetRecordResponse, _gitlab_cells_topology_service_claims_v1_GetRecordResponse__Output>
            LeaseRecord: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_LeaseRecord, _gitlab_cells_topology_service_claims_v1_LeaseRecord__Output>
            ListLeasesRequest: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_ListLeasesRequest, _gitlab_cells_topology_service_claims_v1_ListLeasesRequest__Output>
            ListLeasesResponse: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_ListLeasesResponse, _gitlab_cells_topology_service_claims_v1_ListLeasesResponse__Output>
            ListRecordsRequest: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_ListRecordsRequest, _gitlab_cells_topology_service_claims_v1_ListRecordsRequest__Output>
            ListRecordsResponse: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_ListRecordsResponse, _gitlab_cells_topology_service_claims_v1_ListRecordsResponse__Output>
            Metadata: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_Metadata, _gitlab_cells_topology_service_claims_v1_Metadata__Output>
            Record: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_Record, _gitlab_cells_topology_service_claims_v1_Record__Output>
            RollbackUpdateRequest: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest, _gitlab_cells_topology_service_claims_v1_RollbackUpdateRequest__Output>
            RollbackUpdateResponse: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse, _gitlab_cells_topology_service_claims_v1_RollbackUpdateResponse__Output>
            Source: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_Source, _gitlab_cells_topology_service_claims_v1_Source__Output>
            Subject: MessageTypeDefinition<_gitlab_cells_topology_service_claims_v1_Subject, _gitlab_cells_topology_service_claims_v1_Subject__Output>
          }
        }
        types: {
          v1: {
            Claim: MessageTypeDefinition<_gitlab_cells_topology_service_types_v1_Claim, _gitlab_cells_topology_service_types_v1_Claim__Output>
            ClaimType: EnumTypeDefinition
            UUID: MessageTypeDefinition<_gitlab_cells_topology_service_types_v1_UUID, _gitlab_cells_topology_service_types_v1_UUID__Output>
          }
        }
      }
    }
  }
  google: {
    protobuf: {
      Any: MessageTypeDefinition<_google_protobuf_Any, _google_protobuf_Any__Output>
      Timestamp: MessageTypeDefinition<_google_protobuf_Timestamp, _google_protobuf_Timestamp__Output>
    }
  }
}

