// Original file: protos/topology_service/cell_info.proto


export interface GetCellsRequest {
}

export interface GetCellsRequest__Output {
}
