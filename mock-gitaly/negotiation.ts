import { PktLineReader } from '../lib/pktline.js';

/**
 * What ends a negotiation: upload-pack's `done` packet (v0/v1 last line, v2 fetch argument) or
 * upload-archive's flush after its arguments.
 */
export type NegotiationEnd = 'done' | 'flush';

/**
 * Gitaly's negotiation deadline: watches the client's stdin pkt-lines and calls `onTimeout` if the
 * end marker has not been seen within `timeoutMs`. Stops for good on the marker, on `stop()` (stdin
 * ended, process exited) or on bytes that are not pkt-lines (git itself will reject those).
 */
export class NegotiationMonitor {
  private readonly reader = new PktLineReader();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly until: NegotiationEnd,
    timeoutMs: number,
    onTimeout: () => void,
  ) {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      onTimeout();
    }, timeoutMs);
  }

  get active(): boolean {
    return this.timer !== undefined;
  }

  feed(chunk: Buffer): void {
    if (!this.active) return;
    let packets: ReturnType<PktLineReader['push']>;
    try {
      packets = this.reader.push(chunk);
    } catch {
      this.stop();
      return;
    }
    for (const pkt of packets) {
      if (this.isEnd(pkt)) {
        this.stop();
        return;
      }
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private isEnd(pkt: ReturnType<PktLineReader['push']>[number]): boolean {
    if (this.until === 'flush') return pkt.kind === 'flush';
    if (pkt.kind !== 'data') return false;
    const text = pkt.payload.toString('latin1');
    return text === 'done\n' || text === 'done';
  }
}
