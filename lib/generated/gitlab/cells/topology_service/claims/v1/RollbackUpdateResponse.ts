// Original file: protos/topology_service/claims/v1/claim_service.proto


export interface RollbackUpdateResponse {
}

export interface RollbackUpdateResponse__Output {
}
