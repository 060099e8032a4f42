import http from 'node:http';
import http2 from 'node:http2';
import type { Readable } from 'node:stream';
import { checkResponseFrame, FrameReader, RESPONSE_FRAMING_HEADER, ResponseFrame } from '../lib/framing.js';
import { SHELL_HEADER } from '../lib/jwt.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { drain } from './drain.js';

/**
 * Contender 4: a client streaming straight into a bridge's `POST /<project>.git/ssh-upload-pack`
 * (valid shell JWT, our response framing), over cleartext HTTP/2 (prior knowledge) or HTTP/1.1 with
 * a chunked body, exactly what the router sends. The response is read to its end and checked.
 */
export type BridgeProtocol = 'h2' | 'http1';

export interface UploadPackCall {
  bridgeUrl: string;
  project: string;
  /** Commits to fetch (refs' tips); a full clone wants every branch tip. */
  wants: readonly string[];
  /** `Gitlab-Shell-Api-Request` value. */
  jwt: string;
  timeoutMs: number;
  rateBytesPerSecond?: number;
}

export interface UploadPackResult {
  /** git stdout bytes received (advertisement, NAK and the side-band pack). */
  stdoutBytes: number;
  ms: number;
}

/** Same windows as the router's HTTP/2 client: 1 MiB per stream, 16 MiB per session. */
const STREAM_WINDOW = 1 << 20;
const SESSION_WINDOW = 16 << 20;

/** Protocol v0 fetch request: wants (capabilities on the first), flush, done. */
export function uploadPackBody(wants: readonly string[]): Buffer {
  if (wants.length === 0) throw new Error('upload-pack request needs at least one want');
  const lines = wants.map((sha, i) =>
    encodePkt(i === 0 ? `want ${sha} side-band-64k ofs-delta no-progress\n` : `want ${sha}\n`),
  );
  return Buffer.concat([...lines, FLUSH_PKT, encodePkt('done\n')]);
}

function requestHeaders(call: UploadPackCall): Record<string, string> {
  return {
    [SHELL_HEADER]: call.jwt,
    [RESPONSE_FRAMING_HEADER]: 'v1',
    'content-type': 'application/octet-stream',
    'user-agent': 'cells-bench',
  };
}

/** Reads a framed tunnel response: counts stdout, fails on a non-zero exit, an error frame or a cut stream. */
async function readFramed(body: Readable, call: UploadPackCall): Promise<UploadPackResult> {
  // stdout is counted as it arrives, as the router relays it (no frame waited for or joined)
  const reader = new FrameReader(checkResponseFrame, { streamed: (t) => t === ResponseFrame.stdout });
  let stdoutBytes = 0;
  let stderr = '';
  let exitStatus: number | undefined;
  let error: string | undefined;
  const { ms } = await drain(body, {
    timeoutMs: call.timeoutMs,
    rateBytesPerSecond: call.rateBytesPerSecond,
    onChunk: (chunk) => {
      for (const f of reader.push(chunk)) {
        if (f.type === ResponseFrame.stdout) stdoutBytes += f.payload.length;
        else if (f.type === ResponseFrame.stderr) stderr = (stderr + f.payload.toString()).slice(-4096);
        else if (f.type === ResponseFrame.exitStatus) exitStatus = f.payload.readInt32BE(0);
        else if (f.type === ResponseFrame.error) error = f.payload.toString();
      }
    },
  });
  if (error) throw new Error(`bridge sent an error frame: ${error}`);
  if (reader.truncated) throw new Error('bridge response ended inside a frame');
  if (exitStatus !== 0)
    throw new Error(`upload-pack exit status ${exitStatus ?? 'missing'}: ${stderr.trim()}`);
  return { stdoutBytes, ms };
}

async function failure(status: number, body: Readable): Promise<Error> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return new Error(`bridge answered ${status}: ${Buffer.concat(chunks).toString().slice(0, 500).trim()}`);
}

export async function uploadPackH2(call: UploadPackCall): Promise<UploadPackResult> {
  const started = performance.now();
  const session = http2.connect(call.bridgeUrl, { settings: { initialWindowSize: STREAM_WINDOW } });
  session.on('error', () => undefined); // surfaces on the stream
  try {
    await new Promise<void>((resolve, reject) => {
      session.once('connect', () => resolve());
      session.once('error', reject);
    });
    session.setLocalWindowSize(SESSION_WINDOW);
    const stream = session.request({
      ':method': 'POST',
      ':path': `/${call.project}.git/ssh-upload-pack`,
      ...requestHeaders(call),
    });
    stream.end(uploadPackBody(call.wants));
    const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
      stream.once('close', () =>
        reject(new Error(`stream closed before a response (code ${stream.rstCode})`)),
      );
    });
    const status = Number(headers[':status']);
    if (status !== 200) throw await failure(status, stream);
    if (headers[RESPONSE_FRAMING_HEADER] !== 'v1')
      throw new Error('bridge did not honour response framing v1');
    const r = await readFramed(stream, call);
    return { stdoutBytes: r.stdoutBytes, ms: performance.now() - started };
  } finally {
    session.destroy();
  }
}

export async function uploadPackHttp1(call: UploadPackCall): Promise<UploadPackResult> {
  const started = performance.now();
  const url = new URL(call.bridgeUrl);
  const req = http.request({
    host: url.hostname,
    port: url.port,
    method: 'POST',
    path: `/${call.project}.git/ssh-upload-pack`,
    headers: requestHeaders(call),
    agent: false,
  });
  try {
    const response = new Promise<http.IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
    });
    // write() then end(): no Content-Length, so the body goes out chunked.
    req.write(uploadPackBody(call.wants));
    req.end();
    const res = await response;
    if (res.statusCode !== 200) throw await failure(res.statusCode ?? 0, res);
    if (res.headers[RESPONSE_FRAMING_HEADER] !== 'v1')
      throw new Error('bridge did not honour response framing v1');
    const r = await readFramed(res, call);
    return { stdoutBytes: r.stdoutBytes, ms: performance.now() - started };
  } finally {
    req.destroy();
  }
}

export function uploadPack(protocol: BridgeProtocol, call: UploadPackCall): Promise<UploadPackResult> {
  return protocol === 'h2' ? uploadPackH2(call) : uploadPackHttp1(call);
}
