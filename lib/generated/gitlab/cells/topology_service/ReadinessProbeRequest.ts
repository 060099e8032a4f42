// Original file: protos/topology_service/health_service.proto


export interface ReadinessProbeRequest {
}

export interface ReadinessProbeRequest__Output {
}
