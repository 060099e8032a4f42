import { createHash } from 'node:crypto';
import { encodeRoutableToken } from '../lib/routable-token.js';

/**
 * Personal access tokens and runner authentication tokens, minted in GitLab's routable format
 * (lib/routable-token.ts) and kept in one store per process. Only a SHA-256 digest of each token is
 * stored, as GitLab stores token digests; the clear token is returned once, at creation.
 *
 * PATs live with the users (shared by every cell, like gitlab_users); runners live in the cell
 * that created them (a cell honours only its own runner tokens).
 */

export const PAT_PREFIX = 'glpat-';
export const RUNNER_TOKEN_PREFIX = 'glrt-';

/** Scopes a personal access token may carry (a subset of GitLab's). */
export const PAT_SCOPES = [
  'api',
  'read_api',
  'read_user',
  'create_runner',
  'manage_runner',
  'read_repository',
  'write_repository',
  'sudo',
  'admin_mode',
  'self_rotate',
] as const;
export type PatScope = (typeof PAT_SCOPES)[number];

/** GitLab's runner types and the `t` value of their tokens. */
export const RUNNER_TYPES = { instance_type: 1, group_type: 2, project_type: 3 } as const;
export type RunnerType = keyof typeof RUNNER_TYPES;

export interface PersonalAccessToken {
  kind: 'pat';
  id: number;
  name: string;
  userId: number;
  scopes: PatScope[];
  /** `YYYY-MM-DD` or null; the token stops working on that day. */
  expiresAt: string | null;
  createdAt: string;
  /** The cell that minted it (`c` of the payload). */
  cellId: number;
}

export interface RunnerRecord {
  kind: 'runner';
  id: number;
  runnerType: RunnerType;
  /** Group (namespace) id for group runners, project id for project runners. */
  ownerId: number;
  organizationId: number;
  creatorId: number;
  description: string;
  createdAt: string;
  /** The cell the runner is registered in. */
  cellId: number;
}

export type TokenRecord = PersonalAccessToken | RunnerRecord;

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

export class TokenStore {
  readonly #byDigest = new Map<string, TokenRecord>();
  #nextPatId = 1;
  #nextRunnerId = 1;

  mintPat(
    input: Omit<PersonalAccessToken, 'kind' | 'id' | 'createdAt'>,
    organizationId: number,
  ): { token: string; record: PersonalAccessToken } {
    const record: PersonalAccessToken = {
      kind: 'pat',
      id: this.#nextPatId++,
      createdAt: new Date().toISOString(),
      ...input,
    };
    const token = encodeRoutableToken(PAT_PREFIX, { c: input.cellId, o: organizationId, u: input.userId });
    this.#byDigest.set(digest(token), record);
    return { token, record };
  }

  mintRunner(input: Omit<RunnerRecord, 'kind' | 'id' | 'createdAt'>): {
    token: string;
    record: RunnerRecord;
  } {
    const record: RunnerRecord = {
      kind: 'runner',
      id: this.#nextRunnerId++,
      createdAt: new Date().toISOString(),
      ...input,
    };
    const token = encodeRoutableToken(RUNNER_TOKEN_PREFIX, {
      c: input.cellId,
      o: input.organizationId,
      g: input.runnerType === 'group_type' ? input.ownerId : null,
      p: input.runnerType === 'project_type' ? input.ownerId : null,
      u: input.creatorId,
      t: RUNNER_TYPES[input.runnerType],
    });
    this.#byDigest.set(digest(token), record);
    return { token, record };
  }

  lookup(token: string): TokenRecord | undefined {
    return this.#byDigest.get(digest(token));
  }
}

/** True when a PAT is past its expiry date (`expiresAt` is the first day it no longer works). */
export function isExpired(pat: PersonalAccessToken, now = new Date()): boolean {
  return pat.expiresAt !== null && now.toISOString().slice(0, 10) >= pat.expiresAt;
}
