export { GitalyAddressError, type GitalyTarget, parseGitalyAddress } from './address.js';
export { BackchannelCredentials, type BackchannelOptions } from './backchannel.js';
export {
  GitalyConnection,
  type GitalyConnectionOptions,
  GitalyConnections,
  type GitService,
  type UploadPackMode,
} from './connection.js';
export { SidechannelRegistry, type SidechannelWaiter } from './registry.js';
export { SidechannelSshCall } from './sidechannel-call.js';
export {
  type GitalySshCall,
  type OutputKind,
  type SshCallResult,
  type SshRequest,
  STDIN_MESSAGE_BYTES,
  StreamSshCall,
} from './ssh-call.js';
