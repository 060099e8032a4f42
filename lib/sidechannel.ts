/**
 * Gitaly's sidechannel wire format (used by `SSHUploadPackWithSidechannel`), both directions:
 *
 * - the Gitaly client (bridge) writes git's stdin as pkt-lines **without** a band byte, each payload
 *   ≤ 65516 bytes, and half-closes with a flush `0000`;
 * - Gitaly writes git's stdout and stderr as sideband packets `<4 hex length><band><data>`
 *   (band 1 = stdout, band 2 = stderr, ≤ 65515 data bytes) and ends by closing the stream.
 *
 * The decoders are incremental and stream payload pieces as they arrive: only a packet's 4-byte
 * header is ever buffered, so a large pack passes without being copied or collected.
 */

/** Written by the Gitaly client right after connecting, before the yamux session starts. */
export const BACKCHANNEL_MAGIC = Buffer.from('backchannel');
/** Written by Gitaly on every stream it opens for a sidechannel, before the 8-byte call id. */
export const SIDECHANNEL_MAGIC = Buffer.from('sidechannel');
/** Both magics have the same length, so one peek of this many bytes tells them apart. */
export const MAGIC_LENGTH = 11;
/** The client's answer once it knows the id. */
export const SIDECHANNEL_OK = Buffer.from('ok');
/** gRPC metadata key carrying the call id as a decimal string. */
export const SIDECHANNEL_ID_METADATA = 'gitaly-sidechannel-id';
/** Gitaly waits this long for `ok` (and the client for the stream) before giving up. */
export const SIDECHANNEL_HANDSHAKE_TIMEOUT_MS = 5000;

const MAX_PACKET = 65520;
export const MAX_STDIN_PAYLOAD = MAX_PACKET - 4;
export const MAX_SIDEBAND_DATA = MAX_PACKET - 5;
export const STDIN_FLUSH = Buffer.from('0000');

export type SidechannelErrorCode =
  | 'SIDECHANNEL_INVALID_HEADER'
  | 'SIDECHANNEL_UNEXPECTED_EOF'
  | 'SIDECHANNEL_INVALID_SIDEBAND'
  | 'SIDECHANNEL_UNEXPECTED_BAND';

export class SidechannelError extends Error {
  constructor(
    readonly code: SidechannelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SidechannelError';
  }
}

export type Band = 1 | 2;

function header(length: number): Buffer {
  return Buffer.from(length.toString(16).padStart(4, '0'), 'latin1');
}

/** git stdin → pkt-lines (header and payload slices, for a vectored write); empty data → nothing. */
export function encodeStdin(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += MAX_STDIN_PAYLOAD) {
    const piece = data.subarray(i, i + MAX_STDIN_PAYLOAD);
    out.push(header(piece.length + 4), piece);
  }
  return out;
}

/** git stdout/stderr → sideband packets (header+band, then the data slice). */
export function encodeSideband(band: Band, data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += MAX_SIDEBAND_DATA) {
    const piece = data.subarray(i, i + MAX_SIDEBAND_DATA);
    const head = Buffer.allocUnsafe(5);
    head.write((piece.length + 5).toString(16).padStart(4, '0'), 0, 'latin1');
    head[4] = band;
    out.push(head, piece);
  }
  return out;
}

/** The call id as Gitaly writes it after the magic: 8 bytes, big-endian. */
export function encodeSidechannelId(id: bigint): Buffer {
  const buf = Buffer.alloc(8);
  buf.writeBigInt64BE(id);
  return buf;
}

export function decodeSidechannelId(buf: Buffer): bigint {
  return buf.readBigInt64BE(0);
}

/** The value of 4 ASCII hex digits at `at`, or NaN (pkt-line lengths are lowercase, git accepts both). */
function hexLength(buf: Buffer, at: number): number {
  let n = 0;
  for (let i = at; i < at + 4; i += 1) {
    const c = buf[i] as number;
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return Number.NaN;
    n = n * 16 + d;
  }
  return n;
}

const never = () => false;

function headerText(buf: Buffer, at: number): string {
  return buf.toString('latin1', at, at + 4);
}

/**
 * Shared pkt scanner: reads 4 header bytes (collected only when a chunk splits them), then hands the
 * payload through in pieces. `onHeader` returns how many payload bytes follow (it decides what the
 * length means; NaN = not hex; `buf` and `at` locate the 4 header bytes, for error messages).
 */
class PacketScanner {
  private readonly head = Buffer.alloc(4);
  private headFill = 0;
  private remaining = 0;

  constructor(
    private readonly onHeader: (length: number, buf: Buffer, at: number) => number,
    private readonly onPayload: (piece: Buffer) => void,
  ) {}

  /** Consumes `chunk` until it is used up or `shouldStop` says so (bytes after that are dropped). */
  scan(chunk: Buffer, shouldStop: () => boolean): void {
    let offset = 0;
    while (offset < chunk.length && !shouldStop()) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - offset);
        this.remaining -= take;
        this.onPayload(take === chunk.length ? chunk : chunk.subarray(offset, offset + take));
        offset += take;
      } else if (this.headFill === 0 && chunk.length - offset >= 4) {
        const at = offset;
        offset += 4;
        this.remaining = this.onHeader(hexLength(chunk, at), chunk, at);
      } else {
        const take = Math.min(4 - this.headFill, chunk.length - offset);
        chunk.copy(this.head, this.headFill, offset, offset + take);
        this.headFill += take;
        offset += take;
        if (this.headFill < 4) continue;
        this.headFill = 0;
        this.remaining = this.onHeader(hexLength(this.head, 0), this.head, 0);
      }
    }
  }

  /** True when no packet is half read. */
  get atBoundary(): boolean {
    return this.headFill === 0 && this.remaining === 0;
  }
}

/**
 * Gitaly's reading side of the client's stdin: pkt payloads become git's stdin; a flush is the end
 * of stdin and whatever follows it is ignored; `0001`–`0003` and a stream that ends without the
 * flush are errors (Gitaly's texts).
 */
export class StdinDeframer {
  private done = false;
  private readonly scanner: PacketScanner;
  private out: Buffer[] = [];

  constructor() {
    this.scanner = new PacketScanner(
      (length, buf, at) => {
        if (Number.isNaN(length)) {
          throw new SidechannelError(
            'SIDECHANNEL_INVALID_HEADER',
            `sidechannel: invalid header ${JSON.stringify(headerText(buf, at))}`,
          );
        }
        if (length === 0) {
          this.done = true;
          return 0;
        }
        if (length < 4 || length > MAX_PACKET) {
          throw new SidechannelError('SIDECHANNEL_INVALID_HEADER', `sidechannel: invalid header ${length}`);
        }
        return length - 4;
      },
      (piece) => this.out.push(piece),
    );
  }

  /** Feeds bytes; returns git's stdin found in them and whether the flush has arrived. */
  push(chunk: Buffer): { data: Buffer[]; ended: boolean } {
    if (!this.done) this.scanner.scan(chunk, () => this.done);
    const data = this.out;
    this.out = [];
    return { data, ended: this.done };
  }

  /** The stream ended: an error unless the flush was seen. */
  end(): void {
    if (!this.done) {
      throw new SidechannelError('SIDECHANNEL_UNEXPECTED_EOF', 'sidechannel: unexpected EOF');
    }
  }

  get ended(): boolean {
    return this.done;
  }
}

/**
 * The client's reading side of Gitaly's response: sideband packets → `(band, piece)`. A flush or
 * special packet, a packet with no band byte, or a band other than 1 or 2 is an error.
 */
export class SidebandReader {
  private band: Band | undefined;
  private needBand = false;
  private readonly scanner: PacketScanner;

  constructor(private readonly onData: (band: Band, data: Buffer) => void) {
    this.scanner = new PacketScanner(
      (length, buf, at) => {
        if (Number.isNaN(length) || length < 5 || length > MAX_PACKET) {
          const shown = Number.isNaN(length) ? JSON.stringify(headerText(buf, at)) : length;
          throw new SidechannelError(
            'SIDECHANNEL_INVALID_SIDEBAND',
            `invalid sideband packet: length ${shown}`,
          );
        }
        this.needBand = true;
        return length - 4;
      },
      (piece) => this.payload(piece),
    );
  }

  private payload(piece: Buffer): void {
    let data = piece;
    if (this.needBand) {
      this.needBand = false;
      const band = data[0];
      if (band !== 1 && band !== 2) {
        throw new SidechannelError('SIDECHANNEL_UNEXPECTED_BAND', `unexpected band: ${band}`);
      }
      this.band = band;
      data = data.subarray(1);
    }
    if (data.length > 0 && this.band !== undefined) this.onData(this.band, data);
  }

  push(chunk: Buffer): void {
    this.scanner.scan(chunk, never);
  }

  /** The stream ended: an error if a packet was cut short. */
  end(): void {
    if (!this.scanner.atBoundary) {
      throw new SidechannelError('SIDECHANNEL_UNEXPECTED_EOF', 'sidechannel: response ended inside a packet');
    }
  }
}
