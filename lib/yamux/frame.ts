/**
 * yamux framing constants and the header encoder (hashicorp/yamux `spec.md`; libp2p go-yamux uses the same
 * wire format). Kept free of any session state so the decoder and tests can use it alone.
 */
export const HEADER_SIZE = 12;
/** Every stream starts with this window in each direction; only Data payload counts against it. */
export const INITIAL_WINDOW = 256 * 1024;
/** The only protocol version there is. */
export const PROTOCOL_VERSION = 0;

export const FrameType = { Data: 0, WindowUpdate: 1, Ping: 2, GoAway: 3 } as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

export const Flag = { SYN: 1, ACK: 2, FIN: 4, RST: 8 } as const;
export type Flag = (typeof Flag)[keyof typeof Flag];

export const GoAwayCode = { normal: 0, protocolError: 1, internalError: 2 } as const;
export type GoAwayCode = (typeof GoAwayCode)[keyof typeof GoAwayCode];

/**
 * `length` means different things per type: payload size (Data), window delta (WindowUpdate), an opaque value
 * echoed by the ACK (Ping), an error code (GoAway).
 */
export interface FrameHeader {
  version: number;
  type: FrameType;
  flags: number;
  streamId: number;
  length: number;
}

/** Throws RangeError (from Buffer) when a field does not fit its wire width. */
export function encodeHeader(h: Omit<FrameHeader, 'version'>): Buffer {
  const b = Buffer.allocUnsafe(HEADER_SIZE);
  b.writeUInt8(PROTOCOL_VERSION, 0);
  b.writeUInt8(h.type, 1);
  b.writeUInt16BE(h.flags, 2);
  b.writeUInt32BE(h.streamId, 4);
  b.writeUInt32BE(h.length, 8);
  return b;
}

const TYPE_NAMES = ['Data', 'WindowUpdate', 'Ping', 'GoAway'];
const FLAG_NAMES: ReadonlyArray<[number, string]> = [
  [Flag.SYN, 'SYN'],
  [Flag.ACK, 'ACK'],
  [Flag.FIN, 'FIN'],
  [Flag.RST, 'RST'],
];

/** Compact text for traces and test failure messages, e.g. `WindowUpdate[SYN] id=1 len=0`. */
export function describeHeader(h: Omit<FrameHeader, 'version'>): string {
  const flags = FLAG_NAMES.filter(([bit]) => (h.flags & bit) !== 0).map(([, name]) => name);
  const name = TYPE_NAMES[h.type] ?? `type${h.type}`;
  return `${name}[${flags.join(',')}] id=${h.streamId} len=${h.length}`;
}
