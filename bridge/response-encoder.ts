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
  output(kind: 'stdout' | 'stderr', data: Buffer): Buffer[];
  /** A keepalive to send after `responseKeepaliveMs` without output, if the mode has one. */
  keepalive(): Buffer | undefined;
  success(exitStatus: number): Buffer[];
  failure(failure: TunnelFailure, lastExitStatus: number | undefined): Buffer[];
}

/** Workhorse's mode: stdout and stderr bytes interleaved, a text line appended on failure, no exit status. */
export const compatibleEncoder: ResponseEncoder = {
  framed: false,
  output: (_kind, data) => [data],
  keepalive: () => undefined,
  success: () => [],
  failure: (failure) => [Buffer.from(failure.compatText)],
};

/** Our `Gitlab-Cells-Response-Framing: v1` mode. */
export const framedEncoder: ResponseEncoder = {
  framed: true,
  output(kind, data) {
    const type = kind === 'stdout' ? ResponseFrame.stdout : ResponseFrame.stderr;
    const frames: Buffer[] = [];
    for (let i = 0; i < data.length; i += MAX_RESPONSE_FRAME_PAYLOAD) {
      frames.push(encodeFrame(type, data.subarray(i, i + MAX_RESPONSE_FRAME_PAYLOAD)));
    }
    return frames;
  },
  keepalive: () => encodeFrame(ResponseFrame.keepalive),
  success: (exitStatus) => [encodeExitStatus(exitStatus)],
  failure: (failure, lastExitStatus) => [
    encodeErrorFrame(failure.code, failure.message),
    encodeExitStatus(lastExitStatus ?? 1),
  ],
};
