import { Transform, type TransformCallback } from 'node:stream';

/**
 * Two framings that ride inside the tunnel's HTTP bodies. Both use `[type:1][length:4 BE][payload]`.
 *
 * Request body framing (`Gitlab-Shell-Body-Framing: v1`, GitLab's): type 0x01 data (1–65536
 * bytes of git's stdin), type 0x02 keepalive (length 0, dropped by the receiver).
 *
 * Response framing (`Gitlab-Cells-Response-Framing: v1`, this project's extension): type 0x01
 * stdout, 0x02 stderr, 0x03 exit status (4-byte BE signed integer), 0x04 keepalive (length 0),
 * 0x05 error (UTF-8 JSON `{"code": string, "message": string}`), sent once before the end.
 */
export const BODY_FRAMING_HEADER = 'gitlab-shell-body-framing';
export const RESPONSE_FRAMING_HEADER = 'gitlab-cells-response-framing';
export const FRAMING_VERSION = 'v1';

export const BodyFrame = { data: 0x01, keepalive: 0x02 } as const;
export const ResponseFrame = {
  stdout: 0x01,
  stderr: 0x02,
  exitStatus: 0x03,
  keepalive: 0x04,
  error: 0x05,
} as const;

export const MAX_BODY_FRAME_PAYLOAD = 65536;
/** Response frames are bounded too, so a decoder never buffers more than this per frame. */
export const MAX_RESPONSE_FRAME_PAYLOAD = 1 << 20;
const HEADER_LENGTH = 5;

export class FramingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FramingError';
  }
}

export function encodeFrame(type: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.allocUnsafe(HEADER_LENGTH);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(payload.length, 1);
  return payload.length === 0 ? head : Buffer.concat([head, payload]);
}

export function encodeExitStatus(code: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32BE(code, 0);
  return encodeFrame(ResponseFrame.exitStatus, b);
}

export function encodeErrorFrame(code: string, message: string): Buffer {
  return encodeFrame(ResponseFrame.error, Buffer.from(JSON.stringify({ code, message })));
}

/** Splits git bytes into data frames of at most 65536 bytes. */
export function encodeBodyData(chunk: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let i = 0; i < chunk.length; i += MAX_BODY_FRAME_PAYLOAD) {
    frames.push(encodeFrame(BodyFrame.data, chunk.subarray(i, i + MAX_BODY_FRAME_PAYLOAD)));
  }
  return frames;
}

export type Frame = { type: number; payload: Buffer };

const EMPTY = Buffer.alloc(0);

export interface FrameReaderOptions {
  /**
   * Frame types whose payload is handed on piece by piece as it arrives (several `Frame`s of that
   * type for one frame on the wire, none copied), instead of being collected into one buffer first.
   * For bulk data (stdout, stderr, request data): a frame split over many reads is never copied.
   */
  streamed?: (type: number) => boolean;
}

/**
 * Incremental frame parser with a per-type payload rule. Payloads are views of the pushed chunks;
 * a frame split over several chunks is joined once when it is complete (or, for `streamed` types,
 * handed on in pieces), so no byte is copied more than once whatever the read sizes.
 */
export class FrameReader {
  /** Bytes of a header split over chunks (fewer than five). */
  private head: Buffer = EMPTY;
  /** Type of the frame whose payload is being read, -1 between frames. */
  private type = -1;
  private remaining = 0;
  private streaming = false;
  private parts: Buffer[] = [];

  constructor(
    private readonly check: (type: number, length: number) => string | undefined,
    private readonly options: FrameReaderOptions = {},
  ) {}

  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.type < 0) {
        at = this.readHeader(chunk, at, frames);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - at);
      const piece = chunk.subarray(at, at + take);
      at += take;
      this.remaining -= take;
      if (this.streaming) frames.push({ type: this.type, payload: piece });
      else this.parts.push(piece);
      if (this.remaining === 0) this.finish(frames);
    }
    return frames;
  }

  /** Reads (the rest of) a header from `chunk` at `at`; returns where its payload starts. */
  private readHeader(chunk: Buffer, at: number, frames: Frame[]): number {
    let header: Buffer;
    let next: number;
    if (this.head.length === 0 && chunk.length - at >= HEADER_LENGTH) {
      header = chunk.subarray(at, at + HEADER_LENGTH);
      next = at + HEADER_LENGTH;
    } else {
      next = Math.min(chunk.length, at + HEADER_LENGTH - this.head.length);
      this.head = Buffer.concat([this.head, chunk.subarray(at, next)]);
      if (this.head.length < HEADER_LENGTH) return next;
      header = this.head;
      this.head = EMPTY;
    }
    const type = header.readUInt8(0);
    const length = header.readUInt32BE(1);
    const problem = this.check(type, length);
    if (problem) throw new FramingError(problem);
    this.type = type;
    this.remaining = length;
    this.streaming = this.options.streamed?.(type) ?? false;
    if (length === 0) {
      this.streaming = false;
      this.finish(frames);
    }
    return next;
  }

  private finish(frames: Frame[]): void {
    if (!this.streaming) {
      const parts = this.parts;
      frames.push({
        type: this.type,
        payload: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts),
      });
    }
    this.parts = [];
    this.type = -1;
  }

  /** True when the stream ended in the middle of a frame. */
  get truncated(): boolean {
    return this.head.length > 0 || this.type >= 0;
  }
}

export function checkBodyFrame(type: number, length: number): string | undefined {
  if (type === BodyFrame.data) {
    return length >= 1 && length <= MAX_BODY_FRAME_PAYLOAD
      ? undefined
      : `data frame of invalid length ${length}`;
  }
  if (type === BodyFrame.keepalive) return length === 0 ? undefined : `keepalive frame with length ${length}`;
  return `unknown body frame type 0x${type.toString(16).padStart(2, '0')}`;
}

export function checkResponseFrame(type: number, length: number): string | undefined {
  switch (type) {
    case ResponseFrame.stdout:
    case ResponseFrame.stderr:
    case ResponseFrame.error:
      return length <= MAX_RESPONSE_FRAME_PAYLOAD ? undefined : `frame of ${length} bytes is too long`;
    case ResponseFrame.exitStatus:
      return length === 4 ? undefined : `exit status frame with length ${length}`;
    case ResponseFrame.keepalive:
      return length === 0 ? undefined : `keepalive frame with length ${length}`;
    default:
      return `unknown response frame type 0x${type.toString(16).padStart(2, '0')}`;
  }
}

/** Transform: framed request body in → git stdin bytes out; keepalives dropped; errors on malformed input. */
export class BodyFrameDecoder extends Transform {
  private readonly reader = new FrameReader(checkBodyFrame, {
    streamed: (type) => type === BodyFrame.data,
  });

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      for (const frame of this.reader.push(chunk)) {
        if (frame.type === BodyFrame.data) this.push(frame.payload);
      }
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    done(this.reader.truncated ? new FramingError('request body ended inside a frame') : undefined);
  }
}
