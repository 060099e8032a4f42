import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { HealthServiceClient as _gitlab_cells_topology_service_HealthServiceClient, HealthServiceDefinition as _gitlab_cells_topology_service_HealthServiceDefinition } from './gitlab/cells/topology_service/HealthService.js';
import type { LivenessProbeRequest as _gitlab_cells_topology_service_LivenessProbeRequest, LivenessProbeRequest__Output as _gitlab_cells_topology_service_LivenessProbeRequest__Output } from './gitlab/cells/topology_service/LivenessProbeRequest.js';
import type { LivenessProbeResponse as _gitlab_cells_topology_service_LivenessProbeResponse, LivenessProbeResponse__Output as _gitlab_cells_topology_service_LivenessProbeResponse__Output } from './gitlab/cells/topology_service/LivenessProbeResponse.js';
import type { ReadinessProbeRequest as _gitlab_cells_topology_service_ReadinessProbeRequest, ReadinessProbeRequest__Output as _gitlab_cells_topology_service_ReadinessProbeRequest__Output } from './gitlab/cells/topology_service/ReadinessProbeRequest.js';
import type { ReadinessProbeResponse as _gitlab_cells_topology_service_ReadinessProbeResponse, ReadinessProbeResponse__Output as _gitlab_cells_topology_service_ReadinessProbeResponse__Output } from './gitlab/cells/topology_service/ReadinessProbeResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gitlab: {
    cells: {
      topology_service: {
        HealthService: SubtypeConstructor<typeof grpc.Client, _gitlab_cells_topology_service_HealthServiceClient> & { service: _gitlab_cells_topology_service_HealthServiceDefinition }
        LivenessProbeRequest: MessageTypeDefinition<_gitlab_cells_topology_service_LivenessProbeRequest, _gitlab_cells_topology_service_LivenessProbeRequest__Output>
        LivenessProbeResponse: MessageTypeDefinition<_gitlab_cells_topology_service_LivenessProbeResponse, _gitlab_cells_topology_service_LivenessProbeResponse__Output>
        ReadinessProbeRequest: MessageTypeDefinition<_gitlab_cells_topology_service_ReadinessProbeRequest, _gitlab_cells_topology_service_ReadinessProbeRequest__Output>
        ReadinessProbeResponse: MessageTypeDefinition<_gitlab_cells_topology_service_ReadinessProbeResponse, _gitlab_cells_topology_service_ReadinessProbeResponse__Output>
      }
    }
  }
}

