import type { Readable, Writable } from 'node:stream';
import { checkResponseFrame, FrameReader, ResponseFrame } from '../../lib/framing.js';
import { PktLineReader } from '../../lib/pktline.js';

/**
 * A tunnel response → the SSH channel. Framed responses (our `Gitlab-Cells-Response-Framing: v1`)
 * are split into stdout, stderr, exit status, keepalive and error frames; an unframed response
 * (Workhorse's compatible mode) is copied to stdout as it is. Backpressure: when the channel (or its
 * stderr) is full, the response is paused until it drains.
 */
export interface TunnelOutcome {
  framed: boolean;
  /** From the exit status frame; undefined when none came. */
  exitStatus: number | undefined;
  /** From the error frame. */
  error: { code: string; message: string } | undefined;
  /** True when stderr bytes were relayed to the client. */
  wroteStderr: boolean;
}

/** Rewrites the stdout byte stream (push flow: keep or drop the ref advertisement). */
export interface StdoutFilter {
  push(chunk: Buffer): Buffer;
}

export interface RelayTargets {
  stdout: Writable;
  stderr: Writable;
  /**
   * The connection's socket, when known. Each response chunk becomes several SSH packets of at
   * most 32 KiB; corking the socket while they are written hands them to the kernel in one
   * writev instead of one write per packet.
   */
  transport?: Pick<Writable, 'cork' | 'uncork'>;
}

export class TunnelProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TunnelProtocolError';
  }
}

export function relayResponse(
  body: Readable,
  framed: boolean,
  targets: RelayTargets,
  filter?: StdoutFilter,
): Promise<TunnelOutcome> {
  const outcome: TunnelOutcome = { framed, exitStatus: undefined, error: undefined, wroteStderr: false };
  const reader = framed ? new FrameReader(checkResponseFrame) : undefined;
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (err) reject(err);
      else resolve(outcome);
    };
    const blocked = new Set<Writable>();
    const send = (target: Writable, data: Buffer) => {
      if (data.length === 0) return;
      if (!target.write(data) && !blocked.has(target)) {
        blocked.add(target);
        target.once('drain', () => {
          blocked.delete(target);
          if (blocked.size === 0 && !settled) body.resume();
        });
      }
    };
    const stdout = (data: Buffer) => send(targets.stdout, filter ? filter.push(data) : data);
    const onData = (chunk: Buffer) => {
      targets.transport?.cork();
      try {
        handle(chunk);
      } catch (err) {
        targets.transport?.uncork();
        body.destroy();
        settle(new TunnelProtocolError((err as Error).message));
        return;
      }
      targets.transport?.uncork();
      if (blocked.size > 0) body.pause();
    };
    const handle = (chunk: Buffer) => {
      if (!reader) stdout(chunk);
      else {
        for (const f of reader.push(chunk)) {
          switch (f.type) {
            case ResponseFrame.stdout:
              stdout(f.payload);
              break;
            case ResponseFrame.stderr:
              if (f.payload.length > 0) outcome.wroteStderr = true;
              send(targets.stderr, f.payload);
              break;
            case ResponseFrame.exitStatus:
              outcome.exitStatus = f.payload.readInt32BE(0);
              break;
            case ResponseFrame.error:
              outcome.error = parseErrorFrame(f.payload);
              break;
            default:
              // keepalive
              break;
          }
        }
      }
    };
    body.on('data', onData);
    body.once('end', () => {
      if (reader?.truncated) settle(new TunnelProtocolError('tunnel response ended inside a frame'));
      else settle();
    });
    body.once('error', (err) => settle(err));
    body.once('close', () => settle(new Error('tunnel response closed before its end')));
  });
}

function parseErrorFrame(payload: Buffer): { code: string; message: string } {
  try {
    const v = JSON.parse(payload.toString('utf8')) as { code?: unknown; message?: unknown };
    return {
      code: typeof v.code === 'string' ? v.code : 'UNKNOWN',
      message: typeof v.message === 'string' ? v.message : payload.toString('utf8'),
    };
  } catch {
    return { code: 'UNKNOWN', message: payload.toString('utf8') };
  }
}

/**
 * Splits git's ref advertisement (pkt-lines up to and including the first flush) from what follows.
 * `keep: 'advertisement'` relays it and drops the rest; `keep: 'rest'` drops it and relays the rest.
 */
export class AdvertisementFilter implements StdoutFilter {
  private reader: PktLineReader | undefined = new PktLineReader();
  /** True once the advertisement's flush has been seen. */
  complete = false;

  constructor(private readonly keep: 'advertisement' | 'rest') {}

  push(chunk: Buffer): Buffer {
    const reader = this.reader;
    if (!reader) return this.keep === 'rest' ? chunk : Buffer.alloc(0);
    const packets = reader.push(chunk);
    const advertised: Buffer[] = [];
    const after: Buffer[] = [];
    for (const p of packets) {
      if (this.complete) after.push(p.raw);
      else {
        advertised.push(p.raw);
        if (p.kind === 'flush') this.complete = true;
      }
    }
    if (this.complete) {
      after.push(reader.buffered);
      this.reader = undefined;
    }
    return Buffer.concat(this.keep === 'advertisement' ? advertised : after);
  }
}
