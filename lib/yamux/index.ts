/**
 * yamux (hashicorp/yamux wire format, tolerant of libp2p go-yamux) for Gitaly's backchannel: gRPC's HTTP/2
 * runs on a YamuxStream, Gitaly opens sidechannel streams back. Backlog rule: inbound streams are handed
 * out through 'stream' at once while a listener is attached; without one they are held (already ACKed),
 * and a SYN that finds `acceptBacklog` streams held is answered with RST. Test helpers (in-memory and TCP
 * pairs, a hand-driven raw peer) live in `./test-support.js` and are not re-exported here.
 */
export { FrameDecoder, type FrameDecoderOptions, type FrameHandlers, parseHeader } from './decoder.js';
export { isProtocolFault, isYamuxError, YamuxError, type YamuxErrorCode } from './errors.js';
export {
  describeHeader,
  encodeHeader,
  Flag,
  type FrameHeader,
  FrameType,
  GoAwayCode,
  HEADER_SIZE,
  INITIAL_WINDOW,
} from './frame.js';
export { DEFAULT_MAX_FRAME_DATA, type YamuxOptions, type YamuxRole } from './options.js';
export { YamuxSession } from './session.js';
export { YamuxStream } from './stream.js';
export type { YamuxSessionEvents, YamuxStats } from './types.js';
export { YOUNG_GC_PACE_BYTES } from './young-gc.js';
