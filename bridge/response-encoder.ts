import {
  encodeErrorFrame,
  encodeExitStatus,
  encodeFrame,
  MAX_RESPONSE_FRAME_PAYLOAD,
  ResponseFrame,
} from '../lib/framing.js';

/** Workhorse appends this to a tunnel whose Gitaly call failed after the `200`. */
export const COMPAT_FAILURE_TEXT = 'Internal Server Error\n';

/** How a tunnel that already answered `200` reports a failure in-band. */
export interface TunnelFailure {
  /** Stable code for the error frame, e.g. `GITALY_INTERNAL` or `BRIDGE_IDLE_TIMEOUT`. */
  code: string;
  message: string;
  /** Text appended in compatible mode. */
  compatText: string;
}

/** Turns the tunnel's events into response bytes; one implementation per response mode. */
export interface ResponseEncoder {
  readonly framed: boolean;
  /**
   * A run of output pieces of one kind, in order → the buffers to write. The pieces are passed on as
   * they are (never copied), so a caller can hand them to one vectored write.
   */
  output(kind: 'stdout' | 'stderr', pieces: readonly Buffer[]): Buffer[];
  /** A keepalive to send after `responseKeepaliveMs` without output, if the mode has one. */
  keepalive(): Buffer | undefined;
  success(exitStatus: number): Buffer[];
  failure(failure: TunnelFailure, lastExitStatus: number | undefined): Buffer[];
}

/**
 * Pieces → one frame per piece (a piece over MAX_RESPONSE_FRAME_PAYLOAD is cut), each its 5-byte
 * header followed by the piece itself, so the payload is never copied. Pieces are not merged into
 * one frame: a reader that collects a frame before handing it on (lib/framing's FrameReader, in the
 * router) pays for a frame's size with every read that ends inside it.
 */
export function framePieces(type: number, pieces: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const piece of pieces) {
    if (piece.length <= MAX_RESPONSE_FRAME_PAYLOAD) {
      if (piece.length > 0) out.push(frameHead(type, piece.length), piece);
      continue;
    }
    for (let at = 0; at < piece.length; at += MAX_RESPONSE_FRAME_PAYLOAD) {
      const part = piece.subarray(at, at + MAX_RESPONSE_FRAME_PAYLOAD);
      out.push(frameHead(type, part.length), part);
    }
  }
  return out;
}

function frameHead(type: number, length: number): Buffer {
  const head = Buffer.allocUnsafe(5);
  head[0] = type;
  head.writeUInt32BE(length, 1);
  return head;
}

/** Workhorse's mode: stdout and stderr bytes interleaved, a text line appended on failure, no exit status. */
export const compatibleEncoder: ResponseEncoder = {
  framed: false,
  output: (_kind, pieces) => [...pieces],
  keepalive: () => undefined,
  success: () => [],
  failure: (failure) => [Buffer.from(failure.compatText)],
};

/** Our `Gitlab-Cells-Response-Framing: v1` mode. */
export const framedEncoder: ResponseEncoder = {
  framed: true,
  output: (kind, pieces) =>
    framePieces(kind === 'stdout' ? ResponseFrame.stdout : ResponseFrame.stderr, pieces),
  keepalive: () => encodeFrame(ResponseFrame.keepalive),
  success: (exitStatus) => [encodeExitStatus(exitStatus)],
  failure: (failure, lastExitStatus) => [
    encodeErrorFrame(failure.code, failure.message),
    encodeExitStatus(lastExitStatus ?? 1),
  ],
};
