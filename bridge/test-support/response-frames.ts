import { checkResponseFrame, type Frame, FrameReader, ResponseFrame } from '../../lib/framing.js';

/** Request headers: framed response (ours), framed request body (GitLab's). */
export const FRAMED = { 'gitlab-cells-response-framing': 'v1' } as const;
export const BODY_FRAMED = { 'gitlab-shell-body-framing': 'v1' } as const;

/** The complete response frames at the start of `body`. */
export function frames(body: Buffer): Frame[] {
  return new FrameReader(checkResponseFrame).push(body);
}

/** The payloads of every frame of one type, concatenated (e.g. all of stdout). */
export function payloadOf(body: Buffer, type: number): Buffer {
  return Buffer.concat(
    frames(body)
      .filter((f) => f.type === type)
      .map((f) => f.payload),
  );
}

/** The error frame's `{code, message}`, if any. */
export function errorOf(body: Buffer): { code: string; message: string } | undefined {
  const f = frames(body).find((x) => x.type === ResponseFrame.error);
  return f && (JSON.parse(f.payload.toString()) as { code: string; message: string });
}

/** The exit status when the last frame is one. */
export function exitStatusOf(body: Buffer): number | undefined {
  const last = frames(body).at(-1);
  return last?.type === ResponseFrame.exitStatus ? last.payload.readInt32BE(0) : undefined;
}
