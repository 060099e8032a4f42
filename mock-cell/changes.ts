import { BadRequest } from './errors.js';

/** One ref update of a push, as the pre-receive hook reports it: `<old> <new> <ref>`. */
export interface RefChange {
  oldrev: string;
  newrev: string;
  ref: string;
}

/** GitLab Shell's placeholder for "changes not known yet" (before the pack is received). */
export const ANY_CHANGES = '_any';

const SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function isZeroSha(sha: string): boolean {
  return /^0+$/.test(sha);
}

/** `refs/heads/<name>` → name; undefined for other refs. */
export function branchName(ref: string): string | undefined {
  return ref.startsWith('refs/heads/') && ref.length > 11 ? ref.slice(11) : undefined;
}

/**
 * Parses the `changes` field: `_any` (or nothing) → `_any`; otherwise one `<old> <new> <ref>` per
 * line, blank lines ignored. A malformed line is a bad request.
 */
export function parseChanges(changes: string | undefined): RefChange[] | typeof ANY_CHANGES {
  if (changes === undefined || changes.trim() === '' || changes.trim() === ANY_CHANGES) return ANY_CHANGES;
  const out: RefChange[] = [];
  for (const raw of changes.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const [oldrev, newrev, ref, ...rest] = line.split(/\s+/);
    if (!oldrev || !newrev || !ref || rest.length > 0 || !SHA.test(oldrev) || !SHA.test(newrev)) {
      throw BadRequest(
        `changes: malformed line ${JSON.stringify(line)} (expected "<old sha> <new sha> <ref>")`,
      );
    }
    out.push({ oldrev, newrev, ref });
  }
  return out.length === 0 ? ANY_CHANGES : out;
}
