import { createSign, createVerify, type KeyObject } from 'node:crypto';

/**
 * GitLab's CI job tokens (`glcbt-`, topology-service.md §4 token table): `glcbt-` followed by an
 * RS256 JWT whose claims carry the routing fields `c` (cell), `o` (organization), `u` (user), `p`
 * (project), `g` (group) as **base36 strings**, blank ones dropped, besides `sub`
 * (`gid://gitlab/Ci::Build/<id>`), `iss`, `aud: "gitlab-authz-token"`, `version: "0.1.0"`, `iat`,
 * `exp`; the header names the key (`kid`). An instance prefix may come before `glcbt-`. Like the
 * routable tokens (`routable-token.ts`) a router decodes it without the key to route.
 */

export const CI_JOB_TOKEN_PREFIX = 'glcbt-';
export const CI_JOB_TOKEN_AUDIENCE = 'gitlab-authz-token';
export const CI_JOB_TOKEN_VERSION = '0.1.0';
const ROUTING_KEYS = ['c', 'o', 'u', 'p', 'g'] as const;
const MAX_INSTANCE_PREFIX = 20;

export type CiJobRouting = Partial<Record<(typeof ROUTING_KEYS)[number], number | null | undefined>>;

export interface CiJobTokenClaims {
  sub: string;
  iss: string;
  aud: string;
  version: string;
  iat: number;
  exp: number;
  [routing: string]: unknown;
}

export interface DecodedCiJobToken {
  /** What came before `glcbt-` (an instance prefix), usually "". */
  instancePrefix: string;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** The routing fields, decimal strings (`{c: "2", o: "3", u: "5", p: "3"}`). */
  routing: Record<string, string>;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** `glcbt-<RS256 JWT>` with `routing` as base36 claims (blank values dropped). */
export function signCiJobToken(
  key: KeyObject,
  kid: string,
  claims: Omit<CiJobTokenClaims, 'aud' | 'version'>,
  routing: CiJobRouting,
  instancePrefix = '',
): string {
  const body: Record<string, unknown> = {
    ...claims,
    aud: CI_JOB_TOKEN_AUDIENCE,
    version: CI_JOB_TOKEN_VERSION,
  };
  for (const k of ROUTING_KEYS) {
    const v = routing[k];
    if (v !== undefined && v !== null) body[k] = v.toString(36);
  }
  const input = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64(body)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key).toString('base64url');
  return `${instancePrefix}${CI_JOB_TOKEN_PREFIX}${input}.${signature}`;
}

function json(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Decodes (does not verify) a CI job token; undefined when it is not one. */
export function decodeCiJobToken(token: string): DecodedCiJobToken | undefined {
  const at = token.indexOf(CI_JOB_TOKEN_PREFIX);
  if (at < 0 || at > MAX_INSTANCE_PREFIX) return undefined;
  const parts = token.slice(at + CI_JOB_TOKEN_PREFIX.length).split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return undefined;
  const header = json(parts[0] as string);
  const claims = json(parts[1] as string);
  if (!header || !claims || header.alg !== 'RS256') return undefined;
  const routing: Record<string, string> = {};
  for (const k of ROUTING_KEYS) {
    const v = claims[k];
    if (typeof v === 'string' && /^[0-9a-z]+$/.test(v)) routing[k] = parseBase36(v);
  }
  return { instancePrefix: token.slice(0, at), header, claims, routing };
}

function parseBase36(v: string): string {
  let n = 0n;
  for (const ch of v) n = n * 36n + BigInt(Number.parseInt(ch, 36));
  return n.toString();
}

/** Whether the token's signature verifies with `key` (its claims are not checked). */
export function verifyCiJobTokenSignature(token: string, key: KeyObject): boolean {
  const at = token.indexOf(CI_JOB_TOKEN_PREFIX);
  if (at < 0) return false;
  const [h, p, s] = token.slice(at + CI_JOB_TOKEN_PREFIX.length).split('.');
  if (h === undefined || p === undefined || s === undefined) return false;
  return createVerify('RSA-SHA256').update(`${h}.${p}`).verify(key, Buffer.from(s, 'base64url'));
}
