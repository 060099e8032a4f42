import { createHash } from 'node:crypto';
import { isAbsolute, relative, resolve } from 'node:path';

/**
 * GitLab's hashed storage: project N lives at `@hashed/<h[0:2]>/<h[2:4]>/<h>.git`, where h is the
 * hex SHA-256 of the decimal project id.
 */
export function hashedRepoPath(projectId: number): string {
  const h = createHash('sha256').update(String(projectId)).digest('hex');
  return `@hashed/${h.slice(0, 2)}/${h.slice(2, 4)}/${h}.git`;
}

/**
 * Joins a storage root and a relative path, refusing anything that would leave the storage
 * (absolute paths, `..` segments, NUL bytes). Returns undefined when the path is unsafe.
 */
export function resolveInStorage(storageRoot: string, relativePath: string): string | undefined {
  if (relativePath === '' || relativePath.includes('\0') || isAbsolute(relativePath)) return undefined;
  if (relativePath.split(/[\\/]/).some((seg) => seg === '..')) return undefined;
  const full = resolve(storageRoot, relativePath);
  const rel = relative(resolve(storageRoot), full);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return full;
}

/**
 * Normalizes a repository path from an SSH command or URL (`/group/project.git`, `group/project`)
 * to `group/project`. Returns undefined for paths GitLab would never route: empty, `..`, `.`,
 * empty segments, or characters outside GitLab's path alphabet.
 */
export function normalizeProjectPath(raw: string): string | undefined {
  let p = raw.trim();
  if (p.startsWith('~')) return undefined;
  p = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (p.endsWith('.git')) p = p.slice(0, -4);
  if (p === '') return undefined;
  const segments = p.split('/');
  if (segments.length < 2) return undefined;
  for (const seg of segments) {
    if (seg === '' || seg === '.' || seg === '..') return undefined;
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(seg)) return undefined;
    if (seg.endsWith('.git') || seg.endsWith('.atom')) return undefined;
  }
  return segments.join('/');
}
