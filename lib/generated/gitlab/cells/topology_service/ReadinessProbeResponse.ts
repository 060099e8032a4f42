// Original file: protos/topology_service/health_service.proto


export interface ReadinessProbeResponse {
}

export interface ReadinessProbeResponse__Output {
}
