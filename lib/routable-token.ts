import { randomBytes } from 'node:crypto';
import { CI_JOB_TOKEN_PREFIX, decodeCiJobToken } from './ci-job-token.js';
import { AppError } from './errors.js';

/**
 * GitLab's routable tokens, version 01 (cells-routing.md §2):
 *
 *   <prefix><base64url(random ‖ routing ‖ len(routing))>.01.<b64 length, 2 base36><CRC-32, 7 base36>
 *
 * `routing` is `k:v` lines joined by `\n`, keys sorted, integer values in base36. The CRC-32 (IEEE)
 * covers everything before it. Rails never decodes a token; the router decodes it to route.
 * Keys GitLab writes: `c` cell id, `o` organization id, `g` group id, `p` project id, `u` user id,
 * `t` runner type (1 instance, 2 group, 3 project); any single lower-case letter is accepted.
 * `tokenRouting` also reads `glcbt-` CI job tokens (RS256 JWTs with base36 claims, `ci-job-token.ts`).
 */

export const ROUTABLE_TOKEN_VERSION = '01';
/** Random bytes GitLab's generator puts in front of the routing payload. */
export const RANDOM_BYTES_LENGTH = 16;
/** The design allows 16–65 random bytes; decoding accepts any amount in that range. */
export const MAX_RANDOM_BYTES_LENGTH = 65;
export const MAX_PREFIX_LENGTH = 20;
/** Longest routing payload: ten `k:<2^64-1 in base36>` lines. */
export const MAX_ROUTING_PAYLOAD_BYTES = 159;
export const MIN_PAYLOAD_CHARS = 27;
export const MAX_PAYLOAD_CHARS = 300;
/** Largest value a routing field may carry (an unsigned 64-bit id). */
export const MAX_FIELD_VALUE = 2n ** 64n - 1n;

export type RoutableTokenFailure =
  | 'format'
  | 'version'
  | 'checksum'
  | 'length'
  | 'base64'
  | 'payload'
  | 'encode';

/** A token that cannot be encoded or decoded; `reason` says which rule it broke. */
export class RoutableTokenError extends AppError {
  constructor(
    readonly reason: RoutableTokenFailure,
    message: string,
  ) {
    super('ROUTABLE_TOKEN_INVALID', message, { statusCode: 400, system: false });
    this.name = 'RoutableTokenError';
  }
}

/** Routing fields to encode: integers (ids). `null`/`undefined` fields are dropped, as GitLab drops blanks. */
export type RoutingFields = Record<string, number | bigint | null | undefined>;

export interface DecodedRoutableToken {
  prefix: string;
  /** Routing fields, values as decimal strings (`{c: "2", o: "1", u: "1000"}`). */
  fields: Record<string, string>;
  random: Buffer;
}

const KEY = /^[a-z]$/;
const BASE36 = /^[0-9a-z]+$/;
const BASE64URL = /^[0-9A-Za-z_-]+$/;
/** `<prefix+b64>.<version>.<len><crc>`; the prefix is split off with the length field. */
const TOKEN = /^(?<body>.+)\.(?<version>[0-9a-z]{2})\.(?<len>[0-9a-z]{2})(?<crc>[0-9a-z]{7})$/s;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32/IEEE (zlib's crc32) of the UTF-8 bytes of `text`. */
export function crc32(text: string | Uint8Array): number {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function fail(reason: RoutableTokenFailure, message: string): never {
  throw new RoutableTokenError(reason, message);
}

function fieldValue(key: string, value: number | bigint): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    fail('encode', `routing field "${key}" must be an integer, got ${value}`);
  }
  const n = BigInt(value);
  if (n < 0n || n > MAX_FIELD_VALUE) fail('encode', `routing field "${key}" is out of range: ${n}`);
  return n;
}

/** The routing payload: `k:v` lines (values base36), keys sorted, blank fields dropped. */
export function encodeRoutingPayload(fields: RoutingFields): string {
  const lines: string[] = [];
  for (const key of Object.keys(fields).sort()) {
    const value = fields[key];
    if (value === null || value === undefined) continue;
    if (!KEY.test(key)) fail('encode', `routing key ${JSON.stringify(key)} must be one lower-case letter`);
    lines.push(`${key}:${fieldValue(key, value).toString(36)}`);
  }
  if (!lines.some((l) => l.startsWith('c:') || l.startsWith('o:'))) {
    fail('encode', 'a routable token needs a cell id (c) or an organization id (o)');
  }
  const payload = lines.join('\n');
  if (Buffer.byteLength(payload) > MAX_ROUTING_PAYLOAD_BYTES) {
    fail('encode', `routing payload is longer than ${MAX_ROUTING_PAYLOAD_BYTES} bytes`);
  }
  return payload;
}

/**
 * Builds a routable token. `random` defaults to 16 fresh random bytes (GitLab's generator); tests
 * pass fixed bytes to reproduce known tokens.
 */
export function encodeRoutableToken(
  prefix: string,
  fields: RoutingFields,
  random: Uint8Array = randomBytes(RANDOM_BYTES_LENGTH),
): string {
  if (prefix.length > MAX_PREFIX_LENGTH)
    fail('encode', `prefix is longer than ${MAX_PREFIX_LENGTH} characters`);
  if (random.length < RANDOM_BYTES_LENGTH || random.length > MAX_RANDOM_BYTES_LENGTH) {
    fail('encode', `random part must be ${RANDOM_BYTES_LENGTH}–${MAX_RANDOM_BYTES_LENGTH} bytes`);
  }
  const routing = Buffer.from(encodeRoutingPayload(fields), 'utf8');
  const b64 = Buffer.concat([random, routing, Buffer.from([routing.length])]).toString('base64url');
  const head = `${prefix}${b64}.${ROUTABLE_TOKEN_VERSION}.${b64.length.toString(36).padStart(2, '0')}`;
  return `${head}${crc32(head).toString(36).padStart(7, '0')}`;
}

function parseRouting(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  if (text === '') return fields;
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1);
    if (colon === -1 || !KEY.test(key) || !BASE36.test(value)) {
      fail('payload', `routing line ${JSON.stringify(line)} is not "<letter>:<base36 integer>"`);
    }
    if (key in fields) fail('payload', `routing key "${key}" appears twice`);
    const n = [...value].reduce((acc, ch) => acc * 36n + BigInt(Number.parseInt(ch, 36)), 0n);
    if (n > MAX_FIELD_VALUE) fail('payload', `routing field "${key}" is out of range`);
    fields[key] = n.toString(10);
  }
  return fields;
}

/**
 * Decodes the base64 part of a token given the characters captured before `.01.` and the 2-char
 * base36 length that follows it (what a router rule captures as `payload` and `payload_length`).
 * The captured text may start with prefix characters: only its last `length` characters are used.
 */
export function decodeRoutablePayload(
  captured: string,
  payloadLength: string,
): { fields: Record<string, string>; random: Buffer; consumed: number } {
  if (!/^[0-9a-z]{2}$/.test(payloadLength)) {
    fail('length', `payload length ${JSON.stringify(payloadLength)} is not two base36 characters`);
  }
  const length = Number.parseInt(payloadLength, 36);
  if (length < MIN_PAYLOAD_CHARS || length > MAX_PAYLOAD_CHARS) {
    fail('length', `payload length ${length} is outside ${MIN_PAYLOAD_CHARS}–${MAX_PAYLOAD_CHARS}`);
  }
  if (length > captured.length) {
    fail('length', `payload length ${length} is longer than the ${captured.length} characters given`);
  }
  const b64 = captured.slice(-length);
  if (!BASE64URL.test(b64) || length % 4 === 1) fail('base64', 'payload is not unpadded base64url');
  const bytes = Buffer.from(b64, 'base64url');
  if (bytes.toString('base64url') !== b64) fail('base64', 'payload is not canonical base64url');
  const routingLength = bytes[bytes.length - 1] as number;
  const randomLength = bytes.length - 1 - routingLength;
  if (randomLength < RANDOM_BYTES_LENGTH || randomLength > MAX_RANDOM_BYTES_LENGTH) {
    fail('payload', `routing payload length byte ${routingLength} leaves ${randomLength} random bytes`);
  }
  const routing = bytes.subarray(randomLength, bytes.length - 1);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(routing);
  } catch {
    fail('payload', 'routing payload is not UTF-8');
  }
  return {
    fields: parseRouting(text),
    random: Buffer.from(bytes.subarray(0, randomLength)),
    consumed: length,
  };
}

/** Decodes a whole token and checks its version and CRC. Throws RoutableTokenError. */
export function decodeRoutableToken(token: string): DecodedRoutableToken {
  const m = TOKEN.exec(token);
  if (!m?.groups) fail('format', 'not a routable token (<prefix><payload>.01.<length><crc>)');
  const { body, version, len, crc } = m.groups as Record<'body' | 'version' | 'len' | 'crc', string>;
  if (version !== ROUTABLE_TOKEN_VERSION) fail('version', `unsupported routable token version "${version}"`);
  const expected = crc32(token.slice(0, -7));
  if (Number.parseInt(crc, 36) !== expected) fail('checksum', 'routable token checksum does not match');
  const { fields, random, consumed } = decodeRoutablePayload(body, len);
  const prefix = body.slice(0, body.length - consumed);
  if (prefix.length > MAX_PREFIX_LENGTH)
    fail('format', `prefix is longer than ${MAX_PREFIX_LENGTH} characters`);
  return { prefix, fields, random };
}

/** The routing fields of a token, whichever routable form GitLab gave it. */
export interface TokenRouting {
  /** `v01`: `<prefix><payload>.01.…` (`glpat-`, `glrt-`…); `ci-job-token`: `glcbt-<JWT>` (`ci-job-token.ts`). */
  form: 'v01' | 'ci-job-token';
  /** The token's prefix (`glpat-`; an instance prefix plus `glcbt-`). */
  prefix: string;
  /** Decimal strings by key (`c`, `o`, `u`, `p`, `g`, `t`). */
  fields: Record<string, string>;
}

/**
 * The routing fields of `token` as a router reads them, without any key: a `glcbt-` CI job token's
 * base36 claims, else a version 01 payload; undefined when it is neither.
 */
export function tokenRouting(token: string): TokenRouting | undefined {
  const job = decodeCiJobToken(token);
  if (job)
    return {
      form: 'ci-job-token',
      prefix: `${job.instancePrefix}${CI_JOB_TOKEN_PREFIX}`,
      fields: job.routing,
    };
  try {
    const { prefix, fields } = decodeRoutableToken(token);
    return { form: 'v01', prefix, fields };
  } catch (err) {
    if (err instanceof RoutableTokenError) return undefined;
    throw err;
  }
}
