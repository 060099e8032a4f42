import { YamuxError } from './errors.js';
import { type FrameHeader, FrameType, HEADER_SIZE, PROTOCOL_VERSION } from './frame.js';

export interface FrameHandlers {
  header(h: FrameHeader): void;
  /** A piece of the current Data frame's payload; `last` is true on the piece that completes it. */
  data(streamId: number, chunk: Buffer, last: boolean): void;
}

export interface FrameDecoderOptions {
  /**
   * Largest Data payload acceptable for a stream right now (its receive window). Asked after `header()` has
   * run, so a SYN carried on the Data frame has already created the stream it asks about.
   */
  maxDataLength?: (streamId: number) => number;
}

/**
 * Incremental yamux frame decoder with no I/O. A header split across chunks is collected in a 12-byte
 * buffer; a Data payload is never collected: each piece is handed on as a view of the pushed chunk, so a
 * frame as large as a 16 MiB window costs no extra memory. After the first error the decoder stays failed
 * and rethrows it, because the byte stream can no longer be framed.
 */
export class FrameDecoder {
  private readonly partial = Buffer.alloc(HEADER_SIZE);
  private partialLength = 0;
  private dataStreamId = 0;
  private dataRemaining = 0;
  private failure: unknown;
  private failed = false;

  constructor(
    private readonly handlers: FrameHandlers,
    private readonly opts: FrameDecoderOptions = {},
  ) {}

  push(chunk: Buffer): void {
    if (this.failed) throw this.failure;
    try {
      this.consume(chunk);
    } catch (err) {
      this.failed = true;
      this.failure = err;
      throw err;
    }
  }

  private consume(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.dataRemaining > 0) {
        const n = Math.min(this.dataRemaining, chunk.length - offset);
        this.dataRemaining -= n;
        this.handlers.data(this.dataStreamId, chunk.subarray(offset, offset + n), this.dataRemaining === 0);
        offset += n;
      } else if (this.partialLength === 0 && chunk.length - offset >= HEADER_SIZE) {
        this.onHeader(chunk, offset);
        offset += HEADER_SIZE;
      } else {
        const n = Math.min(HEADER_SIZE - this.partialLength, chunk.length - offset);
        chunk.copy(this.partial, this.partialLength, offset, offset + n);
        this.partialLength += n;
        offset += n;
        if (this.partialLength === HEADER_SIZE) {
          this.partialLength = 0;
          this.onHeader(this.partial, 0);
        }
      }
    }
  }

  private onHeader(buf: Buffer, at: number): void {
    const h = parseHeader(buf, at);
    this.handlers.header(h);
    if (h.type !== FrameType.Data || h.length === 0) return;
    const max = this.opts.maxDataLength?.(h.streamId) ?? Number.POSITIVE_INFINITY;
    if (h.length > max) {
      throw new YamuxError(
        'YAMUX_WINDOW_EXCEEDED',
        `stream ${h.streamId}: Data frame of ${h.length} bytes exceeds the receive window of ${max}`,
      );
    }
    this.dataStreamId = h.streamId;
    this.dataRemaining = h.length;
  }
}

/** Reads and validates one header; the fields that need no validation are taken as they are. */
export function parseHeader(buf: Buffer, at = 0): FrameHeader {
  const version = buf.readUInt8(at);
  if (version !== PROTOCOL_VERSION) {
    throw new YamuxError('YAMUX_BAD_VERSION', `unsupported yamux version ${version}`);
  }
  const type = buf.readUInt8(at + 1);
  if (type > FrameType.GoAway) throw new YamuxError('YAMUX_BAD_TYPE', `unknown yamux frame type ${type}`);
  return {
    version,
    type: type as FrameType,
    flags: buf.readUInt16BE(at + 2),
    streamId: buf.readUInt32BE(at + 4),
    length: buf.readUInt32BE(at + 8),
  };
}
