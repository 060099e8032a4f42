// Original file: protos/topology_service/health_service.proto


export interface LivenessProbeResponse {
}

export interface LivenessProbeResponse__Output {
}
