/**
 * git pkt-line codec: 4 hex digits of length (including themselves) then the payload;
 * `0000` flush, `0001` delimiter (v2), `0002` response end (v2).
 */
export const MAX_PKT_LENGTH = 65520;
export const MAX_PKT_PAYLOAD = MAX_PKT_LENGTH - 4;
export const FLUSH_PKT = Buffer.from('0000');
export const DELIM_PKT = Buffer.from('0001');

export type Packet =
  | { kind: 'data'; payload: Buffer }
  | { kind: 'flush' }
  | { kind: 'delim' }
  | { kind: 'response-end' };

export class PktLineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PktLineError';
  }
}

export function encodePkt(payload: string | Buffer): Buffer {
  const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
  if (data.length > MAX_PKT_PAYLOAD)
    throw new PktLineError(`pkt-line payload of ${data.length} bytes is too long`);
  const head = (data.length + 4).toString(16).padStart(4, '0');
  return Buffer.concat([Buffer.from(head), data]);
}

function parseLength(buf: Buffer, offset: number): number {
  const text = buf.toString('latin1', offset, offset + 4);
  if (!/^[0-9a-fA-F]{4}$/.test(text)) throw new PktLineError(`bad pkt-line length ${JSON.stringify(text)}`);
  return Number.parseInt(text, 16);
}

/**
 * Incremental pkt-line reader. Feed it chunks with `push`; it returns the complete packets and
 * keeps the remainder. `raw` on each packet holds its exact bytes, for relaying unchanged.
 */
export class PktLineReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Array<Packet & { raw: Buffer }> {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const out: Array<Packet & { raw: Buffer }> = [];
    let offset = 0;
    while (this.pending.length - offset >= 4) {
      const len = parseLength(this.pending, offset);
      if (len === 0 || len === 1 || len === 2) {
        const raw = this.pending.subarray(offset, offset + 4);
        out.push({ kind: len === 0 ? 'flush' : len === 1 ? 'delim' : 'response-end', raw });
        offset += 4;
        continue;
      }
      if (len < 4 || len > MAX_PKT_LENGTH) throw new PktLineError(`bad pkt-line length ${len}`);
      if (this.pending.length - offset < len) break;
      const raw = this.pending.subarray(offset, offset + len);
      out.push({ kind: 'data', payload: raw.subarray(4), raw });
      offset += len;
    }
    this.pending = this.pending.subarray(offset);
    return out;
  }

  /** Bytes received but not yet part of a complete packet. */
  get buffered(): Buffer {
    return this.pending;
  }
}

/** Parses a buffer that holds only complete packets (tests, small messages). */
export function decodeAll(buf: Buffer): Packet[] {
  const reader = new PktLineReader();
  const packets = reader.push(buf);
  if (reader.buffered.length > 0) throw new PktLineError('truncated pkt-line');
  return packets.map(({ raw: _raw, ...p }) => p as Packet);
}
