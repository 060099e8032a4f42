import type { Readable, Writable } from 'node:stream';
import { FLUSH_PKT, PktLineReader } from '../../lib/pktline.js';

/**
 * The SSH client's stdin → a tunnel request body, with backpressure both ways (a full body pauses
 * the channel until `drain`). A filter decides what is forwarded and when the body is complete.
 */
export interface InputFilter {
  /** Bytes to forward for this chunk, and whether the request body is complete after them. */
  push(chunk: Buffer): { out: Buffer[]; done: boolean };
  /** Bytes still held when stdin ends. */
  end(): Buffer[];
}

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

export interface InputPump {
  /** Stops forwarding (the body is left as is). */
  stop(): void;
  /** True once the body was ended because the filter said so or stdin ended. */
  readonly bodyEnded: boolean;
}

export function pumpInput(
  source: Readable,
  sink: Writable,
  filter: InputFilter,
  initial: Buffer[] = [],
): InputPump {
  let stopped = false;
  let bodyEnded = false;
  const write = (bufs: Buffer[]): boolean => {
    let ok = true;
    for (const b of bufs) if (b.length > 0) ok = sink.write(b) && ok;
    return ok;
  };
  const endBody = (rest: Buffer[]) => {
    write(rest);
    bodyEnded = true;
    sink.end();
    detach();
    // Whatever the client still sends (v2's flush after `done`) is read and dropped.
    source.on('data', discard);
    source.resume();
  };
  const onData = (chunk: Buffer) => {
    const { out, done } = filter.push(chunk);
    if (done) {
      endBody(out);
      return;
    }
    if (!write(out)) {
      source.pause();
      sink.once('drain', onDrain);
    }
  };
  const onDrain = () => {
    if (!stopped && !bodyEnded) source.resume();
  };
  const onEnd = () => endBody(filter.end());
  const detach = () => {
    source.off('data', onData);
    source.off('end', onEnd);
    sink.off('drain', onDrain);
  };

  const first = filter.push(Buffer.concat(initial));
  if (first.done) endBody(first.out);
  else if (source.readableEnded) endBody([...first.out, ...filter.end()]);
  else {
    source.on('data', onData);
    source.once('end', onEnd);
    if (write(first.out)) source.resume();
    else {
      source.pause();
      sink.once('drain', onDrain);
    }
  }
  return {
    stop() {
      stopped = true;
      detach();
      source.off('data', discard);
      source.pause();
    },
    get bodyEnded() {
      return bodyEnded;
    },
  };
}

function discard(): void {}
