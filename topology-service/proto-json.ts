/**
 * @file The proto3 JSON mapping of the messages `POST /v1/classify` carries, as grpc-gateway v2's
 * default marshaler (protojson, `EmitUnpopulated: true`, `DiscardUnknown: true`) does it:
 * - out: lowerCamelCase names, enums by name, int64 as strings, unset scalars as their default,
 *   unset messages as `null`, unset oneof members left out;
 * - in: the lowerCamelCase or the proto name, int64 as a string or an integer, enums by name or
 *   number (an unknown name is dropped), `null` as unset, unknown fields dropped.
 * The field tables below are checked against the loaded protos by proto-json.test.ts.
 */
import { CLAIM_FIELDS } from './claims.js';
import { InvalidArgument } from './errors.js';

export interface FieldSpec {
  name: string;
  json: string;
  number: number;
  kind: 'string' | 'int64' | 'enum' | 'message';
  repeated?: true;
  /** Enum value names by number. */
  values?: readonly string[];
  message?: () => MessageSpec;
  oneof?: string;
}

export interface MessageSpec {
  /** Full proto name. */
  name: string;
  fields: readonly FieldSpec[];
}

/** protoc's json_name: `ssh_key_fingerprint` → `sshKeyFingerprint`. */
export function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

type Spec = Omit<FieldSpec, 'json'>;
const f = (spec: Spec): FieldSpec => ({ ...spec, json: jsonName(spec.name) });

export const CLAIM: MessageSpec = {
  name: 'gitlab.cells.topology_service.types.v1.Claim',
  fields: CLAIM_FIELDS.map((c) => f({ name: c.name, number: c.number, kind: c.kind, oneof: 'claim' })),
};

export const CLASSIFY_REQUEST: MessageSpec = {
  name: 'gitlab.cells.topology_service.ClassifyRequest',
  fields: [
    f({
      name: 'type',
      number: 2,
      kind: 'enum',
      values: ['UNSPECIFIED', 'FIRST_CELL', 'SESSION_PREFIX', 'CELL_ID'],
    }),
    f({ name: 'value', number: 3, kind: 'string' }),
    f({ name: 'claim', number: 4, kind: 'message', message: () => CLAIM, oneof: 'classification_key' }),
    f({ name: 'claims', number: 5, kind: 'message', message: () => CLAIM, repeated: true }),
  ],
};

export const PROXY_INFO: MessageSpec = {
  name: 'gitlab.cells.topology_service.ProxyInfo',
  fields: [f({ name: 'address', number: 1, kind: 'string' })],
};

export const CLASSIFY_RESPONSE: MessageSpec = {
  name: 'gitlab.cells.topology_service.ClassifyResponse',
  fields: [
    f({ name: 'action', number: 1, kind: 'enum', values: ['ACTION_UNSPECIFIED', 'PROXY'] }),
    f({ name: 'proxy', number: 2, kind: 'message', message: () => PROXY_INFO }),
    f({ name: 'matched_claim', number: 3, kind: 'message', message: () => CLAIM }),
  ],
};

type Obj = Record<string, unknown>;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function bad(field: FieldSpec, value: unknown): never {
  throw InvalidArgument(
    `proto: invalid value for ${field.kind} field ${field.json}: ${JSON.stringify(value)}`,
  );
}

function readInt64(field: FieldSpec, v: unknown): string {
  const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : typeof v === 'string' ? v : '';
  if (!/^-?\d+$/.test(text)) bad(field, v);
  const n = BigInt(text);
  if (n < INT64_MIN || n > INT64_MAX) bad(field, v);
  return n.toString();
}

/** One JSON value of `field` (not repeated); undefined = drop it (an unknown enum name). */
function readValue(field: FieldSpec, v: unknown): unknown {
  switch (field.kind) {
    case 'string':
      return typeof v === 'string' ? v : bad(field, v);
    case 'int64':
      return readInt64(field, v);
    case 'enum':
      if (typeof v === 'string') return field.values?.includes(v) ? v : undefined;
      if (typeof v === 'number' && Number.isInteger(v)) return field.values?.[v] ?? String(v);
      return bad(field, v);
    case 'message':
      if (v === null || typeof v !== 'object' || Array.isArray(v)) bad(field, v);
      return readJson((field.message as () => MessageSpec)(), v);
  }
}

function readField(field: FieldSpec, v: unknown): unknown {
  if (!field.repeated) return readValue(field, v);
  if (!Array.isArray(v)) bad(field, v);
  return v.map((item) => (item === null ? bad(field, item) : readValue(field, item)));
}

/** A JSON object → the message as proto-loader decodes it (proto names, `oneofs: true`). */
export function readJson(spec: MessageSpec, json: unknown): Obj {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw InvalidArgument(`proto: ${spec.name} must be a JSON object`);
  }
  const out: Obj = {};
  for (const field of spec.fields) {
    const both = [field.json, field.name].filter((k, i, all) => all.indexOf(k) === i && k in json);
    if (both.length > 1) throw InvalidArgument(`proto: duplicate field ${field.json}`);
    const v = both[0] === undefined ? undefined : (json as Obj)[both[0]];
    if (v === undefined || v === null) continue;
    const value = readField(field, v);
    if (value === undefined) continue;
    if (field.oneof) {
      if (field.oneof in out) throw InvalidArgument(`proto: oneof ${field.oneof} is already set`);
      out[field.oneof] = field.name;
    }
    out[field.name] = value;
  }
  return out;
}

function defaultOf(field: FieldSpec): unknown {
  if (field.repeated) return [];
  if (field.kind === 'message') return null;
  if (field.kind === 'enum') return field.values?.[0] ?? 0;
  return field.kind === 'int64' ? '0' : '';
}

function writeValue(field: FieldSpec, v: unknown, emitUnpopulated: boolean): unknown {
  switch (field.kind) {
    case 'message':
      return writeJson((field.message as () => MessageSpec)(), v as Obj, { emitUnpopulated });
    case 'int64':
      return String(v);
    case 'enum':
      return typeof v === 'number' ? (field.values?.[v] ?? v) : v;
    default:
      return v;
  }
}

/** A message (proto names, as built for grpc-js) → its proto3 JSON object. */
export function writeJson(spec: MessageSpec, msg: Obj, opts = { emitUnpopulated: true }): Obj {
  const out: Obj = {};
  for (const field of spec.fields) {
    const v = msg[field.name];
    if (v === undefined || v === null) {
      if (opts.emitUnpopulated && !field.oneof) out[field.json] = defaultOf(field);
      continue;
    }
    out[field.json] = field.repeated
      ? (v as unknown[]).map((item) => writeValue(field, item, opts.emitUnpopulated))
      : writeValue(field, v, opts.emitUnpopulated);
  }
  return out;
}
