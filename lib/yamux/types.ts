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

export interface YamuxSessionEvents {
  stream: [stream: YamuxStream];
  close: [err?: Error];
  goaway: [code: number];
}
