/**
 * @file Claims as keys: which member of `types.v1.Claim` is set, its value in one canonical form,
 * and the checks a claim must pass to be registered or looked up.
 */
import type {
  Bucket,
  Bucket__Output,
} from '../lib/generated/gitlab/cells/topology_service/claims/v1/Bucket.js';
import type { Claim, Claim__Output } from '../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { InvalidArgument } from './errors.js';

/** The members of `Claim`'s oneof in field-number order, with their scalar kind and `Bucket.Type`. */
export const CLAIM_FIELDS = [
  { name: 'route', number: 1, kind: 'string', bucket: 'ROUTES' },
  { name: 'organization_path', number: 2, kind: 'string', bucket: 'ORGANIZATION_PATH' },
  { name: 'redirect_route', number: 3, kind: 'string', bucket: 'REDIRECT_ROUTES' },
  { name: 'username', number: 4, kind: 'string', bucket: 'USERNAMES' },
  { name: 'email', number: 5, kind: 'string', bucket: 'EMAILS' },
  { name: 'project_id', number: 6, kind: 'int64', bucket: 'PROJECT_IDS' },
  { name: 'namespace_id', number: 7, kind: 'int64', bucket: 'NAMESPACE_IDS' },
  { name: 'gpg_key', number: 8, kind: 'string', bucket: 'GPG_KEYS' },
  { name: 'ssh_key', number: 9, kind: 'string', bucket: 'SSH_KEYS' },
  { name: 'user_id', number: 10, kind: 'int64', bucket: 'USER_IDS' },
  { name: 'organization_id', number: 11, kind: 'int64', bucket: 'ORGANIZATION_IDS' },
  { name: 'service_desk_custom_email', number: 12, kind: 'string', bucket: 'SERVICE_DESK_CUSTOM_EMAILS' },
  { name: 'gpg_key_fingerprint', number: 13, kind: 'string', bucket: 'GPG_KEY_FINGERPRINTS' },
  { name: 'ssh_key_fingerprint', number: 15, kind: 'string', bucket: 'SSH_KEY_FINGERPRINTS' },
  { name: 'snippet_id', number: 16, kind: 'int64', bucket: 'SNIPPET_IDS' },
  { name: 'pages_domain', number: 17, kind: 'string', bucket: 'PAGES_DOMAINS' },
  { name: 'pages_unique_domain', number: 18, kind: 'string', bucket: 'PAGES_UNIQUE_DOMAINS' },
] as const;

export type ClaimField = (typeof CLAIM_FIELDS)[number]['name'];

/** One claim as a key of the store: its member and its canonical value. */
export interface ClaimKey {
  field: ClaimField;
  value: string;
}

const BY_NAME = new Map<string, (typeof CLAIM_FIELDS)[number]>(CLAIM_FIELDS.map((f) => [f.name, f]));
const BY_BUCKET = new Map<string, (typeof CLAIM_FIELDS)[number]>(CLAIM_FIELDS.map((f) => [f.bucket, f]));

/** Paths, names and addresses GitLab compares without case. */
const CASE_INSENSITIVE: ReadonlySet<ClaimField> = new Set([
  'route',
  'organization_path',
  'redirect_route',
  'username',
  'email',
  'service_desk_custom_email',
  'pages_domain',
  'pages_unique_domain',
]);
/** Claimed at the top level only: `gitlab-org`, never `gitlab-org/gitlab`. */
const TOP_LEVEL: ReadonlySet<ClaimField> = new Set(['route', 'organization_path', 'redirect_route']);
/** SHA-256, unpadded standard base64, as gitlab-shell sends it (`SHA256:` form without the prefix). */
const FINGERPRINT = /^[A-Za-z0-9+/]{43}$/;
const INT64_MAX = 2n ** 63n - 1n;

/** `route "gitlab-org"`, for messages and logs. */
export function describeKey(key: ClaimKey): string {
  return `${key.field} ${JSON.stringify(key.value)}`;
}

/** The store's map key. */
export function keyString(key: ClaimKey): string {
  return `${key.field}\u0000${key.value}`;
}

function canonical(field: (typeof CLAIM_FIELDS)[number], raw: unknown): string {
  if (field.kind === 'int64') {
    const text = String(raw ?? '');
    if (!/^-?\d+$/.test(text)) throw InvalidArgument(`invalid ${field.name}: ${JSON.stringify(text)}`);
    const n = BigInt(text);
    if (n <= 0n || n > INT64_MAX) throw InvalidArgument(`invalid ${field.name}: ${text}`);
    return n.toString();
  }
  const text = typeof raw === 'string' ? raw : '';
  if (text === '') throw InvalidArgument(`empty ${field.name}`);
  if (field.name === 'ssh_key_fingerprint' && !FINGERPRINT.test(text)) {
    throw InvalidArgument(
      `invalid ssh_key_fingerprint: want the 43-character base64 SHA-256 without "SHA256:", got ${JSON.stringify(text)}`,
    );
  }
  return CASE_INSENSITIVE.has(field.name) ? text.toLowerCase() : text;
}

/** The set member: proto-loader's oneof marker, else the one member with a value (a hand-built claim). */
function memberOf(claim: Claim__Output): (typeof CLAIM_FIELDS)[number] | undefined {
  if (claim.claim !== undefined) return BY_NAME.get(claim.claim);
  const set = CLAIM_FIELDS.filter((f) => claim[f.name] !== undefined && claim[f.name] !== null);
  if (set.length > 1)
    throw InvalidArgument(`claim has ${set.length} values set: ${set.map((f) => f.name).join(', ')}`);
  return set[0];
}

/** The key of a `Claim`: exactly one member set, its value well-formed. */
export function claimKey(claim: Claim | Claim__Output | undefined | null): ClaimKey {
  const field = claim ? memberOf(claim as Claim__Output) : undefined;
  if (!claim || !field) throw InvalidArgument('claim has no value set');
  return { field: field.name, value: canonical(field, (claim as Claim__Output)[field.name]) };
}

/** What registration requires beyond a well-formed key: top-level routes only. */
export function checkRegistrable(key: ClaimKey): ClaimKey {
  if (TOP_LEVEL.has(key.field) && key.value.includes('/')) {
    throw InvalidArgument(`only top-level routes are claimed: ${describeKey(key)}`);
  }
  return key;
}

/** The key a `Bucket {type, value}` names (the form older cells send without a claim). */
export function bucketKey(bucket: Bucket__Output | undefined | null): ClaimKey {
  const field = bucket?.type === undefined ? undefined : BY_BUCKET.get(bucket.type);
  if (!bucket || !field)
    throw InvalidArgument(`invalid bucket type: ${JSON.stringify(bucket?.type ?? 'UNSPECIFIED')}`);
  return { field: field.name, value: canonical(field, bucket.value) };
}

/** The `Bucket` and `Claim` of a key, as the store answers them. */
export function keyBucket(key: ClaimKey): Bucket {
  return { type: (BY_NAME.get(key.field) as (typeof CLAIM_FIELDS)[number]).bucket, value: key.value };
}

export function keyClaim(key: ClaimKey): Claim {
  return { [key.field]: key.value };
}

/** `CLAIM_TYPE_ROUTE` → `route`; `ROUTES` (a Bucket.Type) → `route`. */
export function fieldOfClaimType(type: string): ClaimField | undefined {
  return BY_NAME.get(type.replace(/^CLAIM_TYPE_/, '').toLowerCase())?.name;
}

export function fieldOfBucketType(type: string): ClaimField | undefined {
  return BY_BUCKET.get(type)?.name;
}
