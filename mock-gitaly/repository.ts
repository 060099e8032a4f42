import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { ProtoRepository } from '../lib/proto.js';
import { resolveInStorage } from '../lib/repo-path.js';
import { InvalidArgument, RepositoryNotFound } from './errors.js';

function exists(path: string, kind: 'file' | 'dir'): boolean {
  try {
    const st = statSync(path);
    return kind === 'dir' ? st.isDirectory() : st.isFile();
  } catch {
    return false;
  }
}

/** A bare repository as Gitaly recognises one: `HEAD`, `objects/` and `refs/`. */
export function isGitRepository(path: string): boolean {
  return (
    exists(join(path, 'HEAD'), 'file') &&
    exists(join(path, 'objects'), 'dir') &&
    exists(join(path, 'refs'), 'dir')
  );
}

/**
 * Turns a request's repository into the absolute path of an existing bare repository, or throws the
 * error Gitaly answers: unknown storage and unsafe paths → INVALID_ARGUMENT, no repository → NOT_FOUND.
 */
export function resolveRepository(
  storages: Readonly<Record<string, string>>,
  repository: ProtoRepository | undefined,
): string {
  if (!repository) throw InvalidArgument('repository not set');
  const storageName = repository.storage_name ?? '';
  const root = Object.hasOwn(storages, storageName) ? storages[storageName] : undefined;
  if (root === undefined) {
    throw InvalidArgument(`GetStorageByName: no such storage: ${JSON.stringify(storageName)}`);
  }
  const relativePath = repository.relative_path ?? '';
  if (relativePath === '') throw InvalidArgument('GetRepoPath: relative path not set');
  const path = resolveInStorage(root, relativePath);
  if (path === undefined) throw InvalidArgument('GetRepoPath: relative path escapes root directory');
  if (!isGitRepository(path)) {
    throw RepositoryNotFound(`GetRepoPath: not a git repository: ${JSON.stringify(relativePath)}`);
  }
  return path;
}
