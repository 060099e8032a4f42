import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { WORKHORSE_CONTENT_TYPE, type WorkhorsePreauthJson } from '../lib/contracts/workhorse.js';
import { isAppError } from '../lib/errors.js';
import type { ProtoRepository } from '../lib/proto.js';
import { readBodyLimited } from '../lib/streams.js';
import { PreauthInvalid, PreauthUnavailable } from './errors.js';
import { passbackHeaders } from './headers.js';

/**
 * The fields of Rails' authorizing answer (`lib/contracts/workhorse.ts`) the bridge uses, as parsed:
 * the repository as Gitaly's message (fields Rails left out stay absent).
 */
export type PreauthResponse = Pick<
  WorkhorsePreauthJson,
  | 'GL_ID'
  | 'GL_REPOSITORY'
  | 'GL_USERNAME'
  | 'GitConfigOptions'
  | 'GitalyServer'
  | 'GlBuildID'
  | 'GlScopedUserID'
> & { Repository: ProtoRepository; ShowAllRefs?: boolean; NeedAudit?: boolean };

export type PreauthOutcome =
  | { kind: 'authorized'; auth: PreauthResponse; wwwAuthenticate: string | string[] | undefined }
  | { kind: 'refused'; status: number; headers: OutgoingHttpHeaders; body: Buffer };

/** Workhorse buffers at most this much of a refusal; larger ones become an empty 404 or a 500. */
export const PASSBACK_BODY_LIMIT = 32768;
const JSON_BODY_LIMIT = 1024 * 1024;

export interface PreauthRequest {
  railsUrl: string;
  /** Path and query of the client's request, unchanged. */
  url: string;
  headers: OutgoingHttpHeaders;
  timeoutMs: number;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  agents: { http: http.Agent; https: https.Agent };
  /** The client's method (git HTTP's info/refs is a GET); the SSH tunnels' is POST. */
  method?: 'GET' | 'POST' | 'PUT';
}

export type RawPreauthOutcome =
  | { kind: 'authorized'; json: unknown; wwwAuthenticate: string | string[] | undefined }
  | Extract<PreauthOutcome, { kind: 'refused' }>;

/** POSTs the tunnel's path to Rails with no body and classifies the answer as Workhorse does. */
export async function preauthorize(req: PreauthRequest): Promise<PreauthOutcome> {
  const raw = await preauthorizeRaw(req);
  if (raw.kind === 'refused') return raw;
  return { kind: 'authorized', auth: parsePreauthResponse(raw.json), wwwAuthenticate: raw.wwwAuthenticate };
}

/** The pre-authorization round trip; a yes carries Rails' JSON as parsed (LFS has its own shape). */
export async function preauthorizeRaw(req: PreauthRequest): Promise<RawPreauthOutcome> {
  const url = new URL(`${req.railsUrl}${req.url}`);
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = AbortSignal.any([req.signal, timeout]);
  let res: IncomingMessage;
  try {
    const method = req.method ?? 'POST';
    const headers = method === 'GET' ? req.headers : { ...req.headers, 'content-length': '0' };
    res = await send(url, method, headers, signal, req.agents);
  } catch (err) {
    if (req.signal.aborted) throw err;
    const why = timeout.aborted ? `no answer within ${req.timeoutMs} ms` : (err as Error).message;
    throw PreauthUnavailable(`pre-authorization request to ${url.origin} failed: ${why}`, err);
  }
  try {
    const type = (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (res.statusCode === 200 && type === WORKHORSE_CONTENT_TYPE) {
      const body = await readBody(res, JSON_BODY_LIMIT);
      if (body === undefined) throw PreauthInvalid(`pre-authorization body exceeds ${JSON_BODY_LIMIT} bytes`);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw PreauthInvalid(`pre-authorization body is not JSON: ${(err as Error).message}`, err);
      }
      return { kind: 'authorized', json, wwwAuthenticate: res.headers['www-authenticate'] };
    }
    return await passBack(res);
  } catch (err) {
    if (req.signal.aborted || isAppError(err)) throw err;
    throw PreauthUnavailable(`reading the pre-authorization answer failed: ${(err as Error).message}`, err);
  } finally {
    // A body left unread would keep the pooled connection busy.
    if (!res.complete) res.destroy();
  }
}

function send(
  url: URL,
  method: 'GET' | 'POST' | 'PUT',
  headers: OutgoingHttpHeaders,
  signal: AbortSignal,
  agents: PreauthRequest['agents'],
): Promise<IncomingMessage> {
  const mod = url.protocol === 'https:' ? https : http;
  const agent = url.protocol === 'https:' ? agents.https : agents.http;
  return new Promise((resolve, reject) => {
    const r = mod.request(url, { method, headers, signal, agent }, resolve);
    r.on('error', reject);
    r.end();
  });
}

/** Reads at most `limit` bytes; undefined when the body is longer (the rest is not read). */
async function readBody(res: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const { body, truncated } = await readBodyLimited(res, limit);
  return truncated ? undefined : body;
}

/** Workhorse's `passResponseBack`: small bodies verbatim, oversized ones as an empty 404 or a 500. */
async function passBack(res: IncomingMessage): Promise<Extract<PreauthOutcome, { kind: 'refused' }>> {
  const status = res.statusCode ?? 500;
  const body = await readBody(res, PASSBACK_BODY_LIMIT);
  if (body === undefined) {
    return status === 404
      ? { kind: 'refused', status: 404, headers: {}, body: Buffer.alloc(0) }
      : {
          kind: 'refused',
          status: 500,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
          body: Buffer.from('Internal Server Error\n'),
        };
  }
  return { kind: 'refused', status, headers: passbackHeaders(res.headers), body };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function field<T>(
  obj: Record<string, unknown>,
  key: string,
  check: (v: unknown) => v is T,
  what: string,
  path = key,
): T {
  const v = obj[key];
  if (!check(v)) throw PreauthInvalid(`pre-authorization answer: ${path} must be ${what}`);
  return v;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

const REPOSITORY_STRINGS = [
  'storage_name',
  'relative_path',
  'git_object_directory',
  'gl_repository',
  'gl_project_path',
] as const;

const TOP_KEYS = ['GL_ID', 'GL_REPOSITORY', 'GL_USERNAME', 'ShowAllRefs', 'NeedAudit', 'Repository'];
const MORE_TOP_KEYS = ['GitConfigOptions', 'GitalyServer', 'GlBuildID', 'GlScopedUserID'];
const REPOSITORY_KEYS = [
  'storage_name',
  'relative_path',
  ...REPOSITORY_STRINGS,
  'git_alternate_object_directories',
];
const GITALY_KEYS = ['address', 'token', 'call_metadata'];

/**
 * Go's `encoding/json` matches keys case-insensitively when no key matches exactly (Workhorse
 * decodes Rails' `GlBuildID` into `GLBuildID` that way): keys are renamed to the names we read.
 */
function foldKeys(obj: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  for (const name of names) {
    if (name in obj) continue;
    const other = Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
    if (other !== undefined) out[name] = obj[other];
  }
  return out;
}

/** The CI job and the scoped user a push's client context names, when Rails gave them. */
function clientContextIds(
  json: Record<string, unknown>,
): Pick<PreauthResponse, 'GlBuildID' | 'GlScopedUserID'> {
  const out: Pick<PreauthResponse, 'GlBuildID' | 'GlScopedUserID'> = {};
  for (const key of ['GlBuildID', 'GlScopedUserID'] as const) {
    const v = json[key];
    if (v !== undefined && v !== null && typeof v !== 'string')
      throw PreauthInvalid(`pre-authorization answer: ${key} must be a string`);
    if (typeof v === 'string' && v !== '') out[key] = v;
  }
  return out;
}

/** Validates the shape of Rails' JSON; unknown keys are ignored, as Go's decoder does. */
export function parsePreauthResponse(raw: unknown): PreauthResponse {
  if (!isObject(raw)) throw PreauthInvalid('pre-authorization answer is not a JSON object');
  const json = foldKeys(raw, [...TOP_KEYS, ...MORE_TOP_KEYS]);
  const repo = foldKeys(field(json, 'Repository', isObject, 'an object'), REPOSITORY_KEYS);
  const repository: ProtoRepository = {
    storage_name: field(repo, 'storage_name', isNonEmpty, 'a non-empty string', 'Repository.storage_name'),
    relative_path: field(repo, 'relative_path', isNonEmpty, 'a non-empty string', 'Repository.relative_path'),
  };
  for (const key of REPOSITORY_STRINGS) {
    const v = repo[key];
    if (v === undefined || v === null || v === '') continue;
    repository[key] = field(repo, key, isString, 'a string', `Repository.${key}`);
  }
  const alternates = repo.git_alternate_object_directories;
  if (alternates !== undefined && alternates !== null) {
    repository.git_alternate_object_directories = field(
      repo,
      'git_alternate_object_directories',
      isStringArray,
      'an array of strings',
      'Repository.git_alternate_object_directories',
    );
  }
  const gitaly = foldKeys(field(json, 'GitalyServer', isObject, 'an object'), GITALY_KEYS);
  const metadata = gitaly.call_metadata ?? {};
  if (!isObject(metadata) || !Object.values(metadata).every(isString)) {
    throw PreauthInvalid('pre-authorization answer: GitalyServer.call_metadata must map strings to strings');
  }
  const username = json.GL_USERNAME;
  if (username !== undefined && username !== null && typeof username !== 'string') {
    throw PreauthInvalid('pre-authorization answer: GL_USERNAME must be a string or null');
  }
  const options = json.GitConfigOptions ?? [];
  if (!isStringArray(options)) {
    throw PreauthInvalid('pre-authorization answer: GitConfigOptions must be an array of strings');
  }
  return {
    // Empty for a Geo node's own fetch (Rails' `:geo` actor has no user), as Workhorse accepts it.
    GL_ID: field(json, 'GL_ID', isString, 'a string'),
    GL_REPOSITORY: field(json, 'GL_REPOSITORY', isString, 'a string'),
    GL_USERNAME: username ?? '',
    Repository: repository,
    GitConfigOptions: options,
    ...(json.ShowAllRefs === true ? { ShowAllRefs: true } : {}),
    ...(json.NeedAudit === true ? { NeedAudit: true } : {}),
    ...clientContextIds(json),
    GitalyServer: {
      address: field(gitaly, 'address', isNonEmpty, 'a non-empty string', 'GitalyServer.address'),
      token: field(gitaly, 'token', isString, 'a string', 'GitalyServer.token'),
      call_metadata: metadata as Record<string, string>,
    },
  };
}
