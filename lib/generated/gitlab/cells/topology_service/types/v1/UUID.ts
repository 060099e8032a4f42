// Original file: protos/topology_service/types/v1/uuid.proto


export interface UUID {
  'value'?: (string);
}

export interface UUID__Output {
  'value'?: (string);
}
