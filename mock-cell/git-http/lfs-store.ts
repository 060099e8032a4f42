import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { TopologyModel } from '../topology.js';
import type { TopologyProject } from '../topology-types.js';

/**
 * LFS objects of a cell on disk, under the owning cell's storage folder as GitLab's local LFS
 * storage keeps them: `<storage>/@lfs-objects/<oid[0:2]>/<oid[2:4]>/<oid[4:]>`, uploads staged in
 * `<storage>/@lfs-objects/tmp/upload` (the TempPath handed to Workhorse), then moved in place.
 */

export const OID = /^[0-9a-f]{64}$/;

export function lfsRoot(model: TopologyModel, project: TopologyProject): string {
  const root = model.cellOfProject(project).gitaly.storages[project.storage];
  if (root === undefined) throw new Error(`no storage ${project.storage} for ${model.fullPath(project)}`);
  return join(root, '@lfs-objects');
}

export function objectPath(model: TopologyModel, project: TopologyProject, oid: string): string {
  return join(lfsRoot(model, project), oid.slice(0, 2), oid.slice(2, 4), oid.slice(4));
}

export function tempPath(model: TopologyModel, project: TopologyProject): string {
  const dir = join(lfsRoot(model, project), 'tmp', 'upload');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The object's size when it is stored, else undefined. */
export function storedSize(model: TopologyModel, project: TopologyProject, oid: string): number | undefined {
  const path = objectPath(model, project, oid);
  return existsSync(path) ? statSync(path).size : undefined;
}

export function openObject(model: TopologyModel, project: TopologyProject, oid: string) {
  return createReadStream(objectPath(model, project, oid));
}

function sha256File(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', fail)
      .on('end', () => done(hash.digest('hex')));
  });
}

/**
 * Moves an upload Workhorse stored (`file.path`, inside TempPath) into place after checking it is
 * what the URL says (size and SHA-256 = oid); the file is read from disk, never held in memory.
 */
export async function finalizeUpload(
  model: TopologyModel,
  project: TopologyProject,
  upload: { path: string; oid: string; size: number },
): Promise<'ok' | 'bad-path' | 'mismatch'> {
  const staged = resolve(upload.path);
  const rel = relative(tempPath(model, project), staged);
  if (rel === '' || rel.startsWith('..') || rel.includes('/') || !existsSync(staged)) return 'bad-path';
  if (statSync(staged).size !== upload.size || (await sha256File(staged)) !== upload.oid) return 'mismatch';
  const target = objectPath(model, project, upload.oid);
  mkdirSync(dirname(target), { recursive: true });
  renameSync(staged, target);
  return 'ok';
}
