import { YamuxError } from './errors.js';
import { type FrameHeader, HEADER_SIZE, INITIAL_WINDOW } from './frame.js';

export type YamuxRole = 'client' | 'server';

export interface YamuxOptions {
  role: YamuxRole;
  /** Receive window per stream. Default 256 KiB (Gitaly clients); Gitaly servers use 16 MiB. */
  maxStreamWindow?: number;
  /**
   * Inbound streams held while no 'stream' listener is attached; a SYN arriving when this many are held is
   * answered with RST. Default 256; Gitaly's server uses 1.
   */
  acceptBacklog?: number;
  /** Largest Data payload we send in one frame. Default 64 KiB − 12, because libp2p rejects bigger frames. */
  maxFrameData?: number;
  /** 0 (default) = send no pings of our own. */
  keepAliveIntervalMs?: number;
  /** A stream we opened that gets no ACK in this time destroys the session. Default 75 s; 0 = off. */
  streamOpenTimeoutMs?: number;
  /** After our FIN, wait this long for the peer's FIN, then RST. Default 5 min; 0 = off. */
  streamCloseTimeoutMs?: number;
  /**
   * Run a V8 young-generation collection after every this many bytes read or sent as Data, counted
   * across the process's sessions (see young-gc.ts). 0 (default) = never.
   */
  youngGcEveryBytes?: number;
  /** Trace hook for tests: every frame header read from or written to the socket. */
  onFrame?: (direction: 'in' | 'out', header: FrameHeader) => void;
}

export interface ResolvedOptions {
  role: YamuxRole;
  maxStreamWindow: number;
  acceptBacklog: number;
  maxFrameData: number;
  keepAliveIntervalMs: number;
  /** A keepalive ping unanswered this long ends the session (hashicorp's ConnectionWriteTimeout spirit). */
  keepAliveTimeoutMs: number;
  streamOpenTimeoutMs: number;
  streamCloseTimeoutMs: number;
  youngGcEveryBytes: number;
  onFrame: YamuxOptions['onFrame'];
}

export const DEFAULT_MAX_FRAME_DATA = 65536 - HEADER_SIZE;
const MAX_U31 = 2 ** 31 - 1;
const KEEPALIVE_TIMEOUT_MS = 30_000;

/** Validates up front so a bad value fails at construction, not as a hung stream later. */
export function resolveOptions(opts: YamuxOptions): ResolvedOptions {
  if (opts.role !== 'client' && opts.role !== 'server') {
    throw new YamuxError(
      'YAMUX_INVALID_OPTION',
      `role must be 'client' or 'server', got ${String(opts.role)}`,
    );
  }
  return {
    role: opts.role,
    maxStreamWindow: intOption(
      'maxStreamWindow',
      opts.maxStreamWindow,
      INITIAL_WINDOW,
      INITIAL_WINDOW,
      MAX_U31,
    ),
    acceptBacklog: intOption('acceptBacklog', opts.acceptBacklog, 256, 0, MAX_U31),
    maxFrameData: intOption('maxFrameData', opts.maxFrameData, DEFAULT_MAX_FRAME_DATA, 1, MAX_U31),
    keepAliveIntervalMs: intOption('keepAliveIntervalMs', opts.keepAliveIntervalMs, 0, 0, MAX_U31),
    keepAliveTimeoutMs: KEEPALIVE_TIMEOUT_MS,
    streamOpenTimeoutMs: intOption('streamOpenTimeoutMs', opts.streamOpenTimeoutMs, 75_000, 0, MAX_U31),
    streamCloseTimeoutMs: intOption('streamCloseTimeoutMs', opts.streamCloseTimeoutMs, 300_000, 0, MAX_U31),
    youngGcEveryBytes: intOption('youngGcEveryBytes', opts.youngGcEveryBytes, 0, 0, MAX_U31),
    onFrame: opts.onFrame,
  };
}

function intOption(name: string, value: number | undefined, fallback: number, min: number, max: number) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new YamuxError(
      'YAMUX_INVALID_OPTION',
      `${name} must be an integer in [${min}, ${max}], got ${value}`,
    );
  }
  return value;
}
