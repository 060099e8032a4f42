import type { TopologyModel } from './topology.js';
import type { TopologyKey, TopologyUser } from './topology-types.js';

/** Who performs a git action: a user, and the SSH key they used when known. */
export interface Actor {
  user: TopologyUser;
  key?: TopologyKey;
}

export type ActorLookup = { ok: true; actor: Actor } | { ok: false; message: string };

/** The identity fields of `/allowed` (GitLab Shell sends key_id or username; Gitaly hooks user_id). */
export interface ActorParams {
  key_id?: string | number | undefined;
  user_id?: string | number | undefined;
  username?: string | undefined;
}

function parseId(v: string | number): number | undefined {
  const n = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Number.NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

function byKeyId(model: TopologyModel, id: string | number): Actor | undefined {
  const n = parseId(id);
  const key = n === undefined ? undefined : model.keyById(n);
  return key ? { user: model.userOfKey(key), key } : undefined;
}

function byUserId(model: TopologyModel, id: string | number): Actor | undefined {
  const n = parseId(id);
  const user = n === undefined ? undefined : model.userById(n);
  return user ? { user } : undefined;
}

function byUsername(model: TopologyModel, username: string): Actor | undefined {
  const user = model.userByUsername(username);
  return user ? { user } : undefined;
}

/** Resolves the actor as Rails does for the internal API: key_id, else user_id, else username. */
export function actorFromParams(model: TopologyModel, params: ActorParams): ActorLookup {
  const found = (actor: Actor | undefined, message: string): ActorLookup =>
    actor ? { ok: true, actor } : { ok: false, message };
  if (params.key_id !== undefined && params.key_id !== '') {
    return found(byKeyId(model, params.key_id), 'Could not find the given key');
  }
  if (params.user_id !== undefined && params.user_id !== '') {
    return found(byUserId(model, params.user_id), 'Could not find the given user');
  }
  if (params.username !== undefined && params.username !== '') {
    return found(byUsername(model, params.username), 'Could not find the given user');
  }
  return { ok: false, message: 'No user or key was provided.' };
}

/**
 * Resolves a GitLab `gl_id` (`user-<id>`, `key-<id>` or `username-<name>`) to an actor; with
 * `idsOnly`, as Rails' `identify` for the shell-JWT routes, only `user-<id>` and `key-<id>`.
 */
export function actorFromGlId(
  model: TopologyModel,
  glId: string,
  opts: { idsOnly?: boolean } = {},
): Actor | undefined {
  const m = (opts.idsOnly ? /^(user|key)-(\d+)$/ : /^(user|key|username)-(.+)$/).exec(glId);
  if (!m) return undefined;
  const value = m[2] as string;
  if (m[1] === 'user') return byUserId(model, value);
  if (m[1] === 'key') return byKeyId(model, value);
  return byUsername(model, value);
}

export function glId(user: TopologyUser): string {
  return `user-${user.id}`;
}
