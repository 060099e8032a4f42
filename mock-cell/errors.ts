import { defineError } from '../lib/errors.js';

/**
 * The mock cell's error registry. Policy answers of the access check (denied, not found, another
 * cell) are not errors: they are decisions rendered by the routes. These codes are for faults.
 */
export const TopologyInvalid = defineError('CELL_TOPOLOGY_INVALID', 500, true);
/** A request the API cannot interpret (missing or malformed field). */
export const BadRequest = defineError('CELL_BAD_REQUEST', 400);
/** `git` failed while inspecting pushed commits. */
export const GitFailed = defineError('CELL_GIT_FAILED', 500);
/** `git` did not answer in time while inspecting pushed commits. */
export const GitTimeout = defineError('CELL_GIT_TIMEOUT', 503);
/** A name the request refers to does not exist (e.g. the organization to move). */
export const NotFound = defineError('CELL_NOT_FOUND', 404);
/** The request conflicts with the current state (e.g. a repository already at the target). */
export const Conflict = defineError('CELL_CONFLICT', 409);
/** Moving repositories between cell storages failed (moved ones were put back). */
export const RepositoryMoveFailed = defineError('CELL_REPOSITORY_MOVE_FAILED', 500);
