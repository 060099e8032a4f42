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

/** Incremental frame parser with a per-type payload rule. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly check: (type: number, length: number) => string | undefined) {}

  push(chunk: Buffer): Frame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Frame[] = [];
    let offset = 0;
    while (this.pending.length - offset >= HEADER_LENGTH) {
      const type = this.pending.readUInt8(offset);
      const length = this.pending.readUInt32BE(offset + 1);
      const problem = this.check(type, length);
      if (problem) throw new FramingError(problem);
      if (this.pending.length - offset - HEADER_LENGTH < length) break;
      frames.push({
        type,
        payload: this.pending.subarray(offset + HEADER_LENGTH, offset + HEADER_LENGTH + length),
      });
      offset += HEADER_LENGTH + length;
    }
    this.pending = this.pending.subarray(offset);
    return frames;
  }

  /** True when the stream ended in the middle of a frame. */
  get truncated(): boolean {
    return this.pending.length > 0;
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
  private readonly reader = new FrameReader(checkBodyFrame);

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
