/**
 * `PackfileNegotiationStatistics` of one upload-pack, counted from the client's stdin the way Gitaly
 * does (`internal/git/stats/packfile_negotiation.go`): every pkt-line up to (not including) the first
 * `done` is a packet, flush and delim packets included; `command=…` and `agent=…` lines only count
 * as packets; the payload size is the sum of the payloads without their trailing newline. A malformed
 * line stops the count (Gitaly logs the parse error and reports what it had).
 */
export interface NegotiationStats {
  payload_size: number;
  packets: number;
  caps: string[];
  wants: number;
  haves: number;
  shallows: number;
  deepen: string;
  filter: string;
}

/** Gitaly's pkt-line scanner limit (`MaxPktSize`). */
const MAX_PKT_SIZE = 65520;

export class NegotiationStatsParser {
  private readonly stats: NegotiationStats = {
    payload_size: 0,
    packets: 0,
    caps: [],
    wants: 0,
    haves: 0,
    shallows: 0,
    deepen: '',
    filter: '',
  };
  private capsSeen = false;
  private stopped = false;
  private pending: Buffer = Buffer.alloc(0);

  /** Feeds git's stdin as the client sent it; cheap once the negotiation has ended. */
  feed(chunk: Buffer): void {
    if (this.stopped) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (!this.stopped && this.pending.length - offset >= 4) {
      const head = this.pending.toString('latin1', offset, offset + 4);
      const length = /^[0-9a-fA-F]{4}$/.test(head) ? Number.parseInt(head, 16) : Number.NaN;
      if (Number.isNaN(length) || length > MAX_PKT_SIZE) {
        this.stopped = true;
        break;
      }
      const size = Math.max(length, 4);
      if (this.pending.length - offset < size) break;
      this.line(this.pending.toString('latin1', offset + 4, offset + size));
      offset += size;
    }
    this.pending = this.stopped ? Buffer.alloc(0) : this.pending.subarray(offset);
  }

  get result(): NegotiationStats {
    return { ...this.stats, caps: [...this.stats.caps] };
  }

  private line(payload: string): void {
    const data = payload.endsWith('\n') ? payload.slice(0, -1) : payload;
    const split = data.split(' ');
    const first = split[0] ?? '';
    const s = this.stats;
    s.payload_size += data.length;
    if (first.startsWith('command=') || first.startsWith('agent=')) {
      s.packets++;
      return;
    }
    if (!this.known(first, split)) {
      this.stopped = true;
      return;
    }
    if (first === 'done') {
      this.stopped = true;
      return;
    }
    s.packets++;
  }

  /** Counts one line; false for a malformed known line (Gitaly's parse error). */
  private known(first: string, split: string[]): boolean {
    const s = this.stats;
    const data = split.join(' ');
    switch (first) {
      case 'want':
        if (split.length < 2 || (split.length > 2 && this.capsSeen)) return false;
        s.wants++;
        if (split.length > 2) {
          this.capsSeen = true;
          s.caps = split.slice(2);
        }
        return true;
      case 'shallow':
        return split.length === 2 && ++s.shallows > 0;
      case 'deepen':
      case 'deepen-since':
      case 'deepen-not':
        if (split.length !== 2) return false;
        s.deepen = data;
        return true;
      case 'filter':
        if (split.length !== 2) return false;
        s.filter = split[1] ?? '';
        return true;
      case 'have':
        return split.length === 2 && ++s.haves > 0;
      default:
        return true;
    }
  }
}
