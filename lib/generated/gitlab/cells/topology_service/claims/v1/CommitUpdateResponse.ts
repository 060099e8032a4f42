// Original file: protos/topology_service/claims/v1/claim_service.proto


export interface CommitUpdateResponse {
}

export interface CommitUpdateResponse__Output {
}
