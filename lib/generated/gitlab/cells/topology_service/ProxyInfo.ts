// Original file: protos/topology_service/classify_service.proto


export interface ProxyInfo {
  'address'?: (string);
}

export interface ProxyInfo__Output {
  'address'?: (string);
}
