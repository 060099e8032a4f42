/**
 * @file The SSH client's stdin → a tunnel request body, with backpressure both ways (a full body
 * pauses the channel until it drains). A filter decides what is forwarded and when the body is
 * complete; the plumbing is `pipeFiltered` (`lib/streams.ts`).
 */
import type { Readable, Writable } from 'node:stream';
import { FLUSH_PKT, PktLineReader } from '../../lib/pktline.js';
import { type ChunkFilter, pipeFiltered } from '../../lib/streams.js';
import { RouterError } from '../errors.js';

/** Decides what of stdin is forwarded and when the request body is complete. */
export type InputFilter = ChunkFilter;

export const passthrough: InputFilter = {
  push: (chunk) => ({ out: [chunk], done: false }),
  end: () => [],
};

/**
 * upload-pack over the tunnel, as GitLab Shell does it since gitlab-shell!1537/!1546: forward
 * pkt-lines until the client's `done`, then add a flush packet (protocol v2 needs the `fetch`
 * section closed; v0/v1 ignore it) and end the body, so no request body idles during the pack
 * transfer. Without `done` (v2 `ls-refs`, `ls-remote`) everything is forwarded until stdin ends.
 * Bytes that are not pkt-lines are forwarded unchanged and end the inspection.
 */
export class UploadPackFilter implements InputFilter {
  private reader: PktLineReader | undefined = new PktLineReader();

  push(chunk: Buffer): { out: Buffer[]; done: boolean } {
    const reader = this.reader;
    if (!reader) return { out: [chunk], done: false };
    let packets: ReturnType<PktLineReader['push']>;
    try {
      packets = reader.push(chunk);
    } catch {
      // Not pkt-lines: from here on git upload-pack judges the bytes itself.
      this.reader = undefined;
      return { out: [chunk], done: false };
    }
    const out: Buffer[] = [];
    for (const p of packets) {
      out.push(Buffer.from(p.raw));
      if (p.kind === 'data' && isDone(p.payload)) {
        out.push(FLUSH_PKT);
        return { out, done: true };
      }
    }
    return { out, done: false };
  }

  end(): Buffer[] {
    const rest = this.reader?.buffered;
    return rest && rest.length > 0 ? [Buffer.from(rest)] : [];
  }
}

function isDone(payload: Buffer): boolean {
  return (
    payload.length <= 5 && (payload.toString('latin1') === 'done\n' || payload.toString('latin1') === 'done')
  );
}

/** The tunnel request body being fed from the client's stdin. */
export interface InputPump {
  /** Stops forwarding (the body is left as is). */
  stop(): void;
  /** True once the body was ended because the filter said so or stdin ended. */
  readonly bodyEnded: boolean;
}

/**
 * What the request body may hold before the channel is paused (a push's pack): Node's HTTP/2
 * request streams have a 16 KiB high-water mark, which sent each SSH packet on its own.
 */
export const BODY_BUFFER_BYTES = 256 * 1024;

/** `initial`, then the client's stdin, through `filter` into the request body (`lib/streams.ts`). */
export function pumpInput(
  source: Readable,
  sink: Writable,
  filter: InputFilter,
  initial: Buffer[] = [],
): InputPump {
  const pipe = pipeFiltered(source, sink, filter, initial, BODY_BUFFER_BYTES);
  return {
    stop: () => pipe.stop(),
    get bodyEnded() {
      return pipe.sinkEnded;
    },
  };
}

/**
 * Waits until the client sent at least `n` bytes (or ended stdin) and returns them, leaving the
 * channel paused for the next reader.
 */
export function readAtLeast(source: Readable, n: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: Error) => {
      source.off('data', onData);
      source.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      source.pause();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= n) finish();
    };
    const onEnd = () => finish();
    const onAbort = () => finish(RouterError.cancelled('cancelled'));
    if (signal.aborted) return onAbort();
    if (source.readableEnded) return finish();
    source.on('data', onData);
    source.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    source.resume();
  });
}
