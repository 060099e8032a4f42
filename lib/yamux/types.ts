import type { YamuxStream } from './stream.js';

export interface YamuxStats {
  framesIn: number;
  framesOut: number;
  /** Socket bytes, headers included. */
  bytesIn: number;
  bytesOut: number;
  streamsOpened: number;
  streamsAccepted: number;
}

export function emptyStats(): YamuxStats {
  return { framesIn: 0, framesOut: 0, bytesIn: 0, bytesOut: 0, streamsOpened: 0, streamsAccepted: 0 };
}

export interface YamuxSessionEvents {
  stream: [stream: YamuxStream];
  close: [err?: Error];
  goaway: [code: number];
}
