import type { Metadata } from '@grpc/grpc-js';

/**
 * Gitaly's `LimitError` status detail (`errors.proto`: `string error_message = 1;
 * google.protobuf.Duration retry_after = 2;`), carried as a `google.rpc.Status` (`code = 1,
 * message = 2, repeated google.protobuf.Any details = 3`; `Any`: `type_url = 1, value = 2`) in the
 * `grpc-status-details-bin` trailer. Encoded and decoded by hand: these few fields are all we need.
 */

export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';
export const LIMIT_ERROR_TYPE_URL = 'type.googleapis.com/gitaly.LimitError';
/** The `retry_after` our mock Gitaly's limit-error fault sets (0 would mean: do not retry). */
export const LIMIT_ERROR_RETRY_AFTER_SECONDS = 1;

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

const bytesField = (num: number, value: Buffer) =>
  Buffer.concat([Buffer.from([...varint((num << 3) | 2), ...varint(value.length)]), value]);
const varintField = (num: number, value: number) => Buffer.from([...varint(num << 3), ...varint(value)]);

/** The `google.rpc.Status` bytes of a call failed with `code` and one `LimitError` detail. */
export function limitErrorStatusDetails(code: number, message: string, retryAfterSeconds: number): Buffer {
  const duration = retryAfterSeconds > 0 ? varintField(1, retryAfterSeconds) : Buffer.alloc(0);
  const limitError = Buffer.concat([bytesField(1, Buffer.from(message)), bytesField(2, duration)]);
  const any = Buffer.concat([bytesField(1, Buffer.from(LIMIT_ERROR_TYPE_URL)), bytesField(2, limitError)]);
  return Buffer.concat([varintField(1, code), bytesField(2, Buffer.from(message)), bytesField(3, any)]);
}

interface Field {
  num: number;
  wire: number;
  bytes?: Buffer;
}

function readVarint(b: Buffer, at: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (let i = at; i < b.length && i < at + 10; i++) {
    const byte = b[i] ?? 0;
    v += (byte & 0x7f) * mul;
    mul *= 128;
    if (byte < 0x80) return [v, i + 1];
  }
  throw new Error('protobuf: truncated varint');
}

/** The fields of one message (varint and length-delimited; fixed-width ones skipped). */
function fields(b: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < b.length) {
    const [key, next] = readVarint(b, at);
    at = next;
    const f: Field = { num: Math.floor(key / 8), wire: key & 7 };
    if (f.wire === 0) at = readVarint(b, at)[1];
    else if (f.wire === 1) at += 8;
    else if (f.wire === 5) at += 4;
    else if (f.wire === 2) {
      const [len, start] = readVarint(b, at);
      if (start + len > b.length) throw new Error('protobuf: length beyond the message');
      f.bytes = b.subarray(start, start + len);
      at = start + len;
    } else throw new Error(`protobuf: wire type ${f.wire}`);
    out.push(f);
  }
  return out;
}

/** Whether a failed call's trailers carry a `gitaly.LimitError` detail (Workhorse's `handleLimitErr`). */
export function hasLimitError(metadata: Metadata | undefined): boolean {
  for (const value of metadata?.get(STATUS_DETAILS_KEY) ?? []) {
    if (!Buffer.isBuffer(value)) continue;
    try {
      for (const detail of fields(value)) {
        if (detail.num !== 3 || !detail.bytes) continue;
        const typeUrl = fields(detail.bytes)
          .find((f) => f.num === 1 && f.bytes)
          ?.bytes?.toString('utf8');
        if (typeUrl?.endsWith('/gitaly.LimitError')) return true;
      }
    } catch {
      // Undecodable details are no LimitError.
    }
  }
  return false;
}
