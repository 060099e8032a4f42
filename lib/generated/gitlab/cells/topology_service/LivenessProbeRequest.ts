// Original file: protos/topology_service/health_service.proto


export interface LivenessProbeRequest {
}

export interface LivenessProbeRequest__Output {
}
