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
