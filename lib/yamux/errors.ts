/**
 * One error class for the whole multiplexer, so callers (the backchannel, grpc-js glue, tests) can branch on a
 * stable `code` instead of parsing messages, and tell yamux faults from socket or application errors.
 */
export type YamuxErrorCode =
  /** A frame header whose version byte is not 0. */
  | 'YAMUX_BAD_VERSION'
  /** A frame header whose type byte is not Data, WindowUpdate, Ping or GoAway. */
  | 'YAMUX_BAD_TYPE'
  /** The peer broke a rule of the protocol (stream id parity, duplicate SYN, …). */
  | 'YAMUX_PROTOCOL'
  /** The peer sent more Data than the receive window we granted. */
  | 'YAMUX_WINDOW_EXCEEDED'
  /** The peer reset the stream (RST). */
  | 'YAMUX_STREAM_RESET'
  /** The session is over (socket closed, session closed or destroyed). */
  | 'YAMUX_SESSION_CLOSED'
  /** The peer sent GoAway: no new streams, or (with an error code) the session ended. */
  | 'YAMUX_GO_AWAY'
  /** A stream we opened was not acknowledged within `streamOpenTimeoutMs`. */
  | 'YAMUX_OPEN_TIMEOUT'
  /** After our FIN the peer did not send its FIN within `streamCloseTimeoutMs`; the stream was reset. */
  | 'YAMUX_CLOSE_TIMEOUT'
  /** A ping (our keepalive, or `ping(timeoutMs)`) was not answered in time. */
  | 'YAMUX_PING_TIMEOUT'
  /** All 2^31 stream ids of our parity have been used. */
  | 'YAMUX_STREAMS_EXHAUSTED'
  /** An option passed to the session is out of range. */
  | 'YAMUX_INVALID_OPTION';

export class YamuxError extends Error {
  readonly code: YamuxErrorCode;

  constructor(code: YamuxErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'YamuxError';
    this.code = code;
  }
}

export function isYamuxError(err: unknown, code?: YamuxErrorCode): err is YamuxError {
  return err instanceof YamuxError && (code === undefined || err.code === code);
}

const PROTOCOL_FAULTS: ReadonlySet<string> = new Set([
  'YAMUX_BAD_VERSION',
  'YAMUX_BAD_TYPE',
  'YAMUX_PROTOCOL',
  'YAMUX_WINDOW_EXCEEDED',
]);

/** Faults of the peer's framing, answered with GoAway(protocol error) rather than GoAway(internal error). */
export function isProtocolFault(err: unknown): boolean {
  return err instanceof YamuxError && PROTOCOL_FAULTS.has(err.code);
}
