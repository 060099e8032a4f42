import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { hashedRepoPath } from '../lib/repo-path.js';
import type { Topology } from '../mock-cell/topology-types.js';
import { HOST_KEY_ARGS, hostKeyTypeOf } from '../router/ssh/host-key.js';
import { createDemoRepository } from './git-fixture.js';
import type { StackPaths } from './layout.js';
import type { World } from './topology-file-resolve.js';

const run = promisify(execFile);

/** Writes a random secret file (mode 600) unless it exists: 32 hex characters, as GitLab generates. */
export async function ensureSecret(path: string): Promise<void> {
  if (existsSync(path)) return;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${randomBytes(16).toString('hex')}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** Generates an ed25519 key pair with ssh-keygen unless it exists; returns the public key line. */
export async function ensureSshKey(
  privatePath: string,
  comment: string,
  typeArgs: readonly string[] = ['-t', 'ed25519'],
): Promise<string> {
  if (!existsSync(privatePath)) {
    await mkdir(dirname(privatePath), { recursive: true, mode: 0o700 });
    await run('ssh-keygen', ['-q', ...typeArgs, '-N', '', '-C', comment, '-f', privatePath]);
  }
  await chmod(privatePath, 0o600);
  return (await readFile(`${privatePath}.pub`, 'utf8')).trim();
}

/**
 * Creates what a world needs besides configuration: secrets, a key pair per user whose public key
 * the topology file does not give (that one is written to `<keys>/<username>.pub`), and the
 * routers' host keys. Existing files are kept. Returns each user's public key line.
 */
export async function ensureSecretsAndKeys(paths: StackPaths, world: World): Promise<Record<string, string>> {
  await Promise.all([
    ensureSecret(paths.shellSecret),
    ensureSecret(paths.workhorseSecret),
    ensureSecret(paths.gitalyToken),
  ]);
  const publicKeys: Record<string, string> = {};
  for (const user of world.users) {
    if (user.publicKey !== undefined) {
      await mkdir(paths.keysDir, { recursive: true, mode: 0o700 });
      // A key pair an earlier start generated for this user is not the user's any more.
      await rm(paths.userKey(user.username), { force: true });
      await writeFile(`${paths.userKey(user.username)}.pub`, `${user.publicKey.trim()}\n`);
      publicKeys[user.username] = user.publicKey.trim();
      continue;
    }
    publicKeys[user.username] = await ensureSshKey(
      paths.userKey(user.username),
      `${user.username}@cells-demo`,
    );
  }
  for (const file of paths.hostKeys)
    await ensureSshKey(file, 'router-host-key', HOST_KEY_ARGS[hostKeyTypeOf(file)]);
  return publicKeys;
}

/** Absolute repository folder of every project of a topology (namespace → organization → cell → storage). */
export function repositoryDirs(topology: Topology): Record<string, string> {
  const out: Record<string, string> = {};
  for (const project of topology.projects) {
    const ns = topology.namespaces.find((n) => n.path === project.namespace);
    const org = topology.organizations.find((o) => o.path === ns?.organization);
    const cell = topology.cells.find((c) => c.name === org?.cell);
    const storage = cell?.gitaly.storages[project.storage];
    if (!storage) throw new Error(`topology: cannot place project ${project.namespace}/${project.path}`);
    out[`${project.namespace}/${project.path}`] = join(storage, hashedRepoPath(project.id));
  }
  return out;
}

/**
 * Creates each missing repository of a world from its source (the demo history, an empty
 * repository, or a mirror of the user's bare repository); existing ones (and pushed work) are kept.
 */
export async function ensureRepositories(topology: Topology, world: World): Promise<Record<string, string>> {
  const dirs = repositoryDirs(topology);
  for (const cell of topology.cells) {
    for (const storage of Object.values(cell.gitaly.storages)) await mkdir(storage, { recursive: true });
  }
  for (const project of world.projects) {
    const full = `${project.namespace}/${project.path}`;
    const dir = dirs[full];
    if (dir === undefined || existsSync(join(dir, 'HEAD'))) continue;
    await mkdir(dirname(dir), { recursive: true });
    const source = project.repository;
    if ('bare' in source)
      await run('git', ['clone', '--quiet', '--mirror', source.bare, dir], { env: gitEnv() });
    else if (source.seed === 'empty')
      await run('git', ['init', '--quiet', '--bare', `--initial-branch=${project.defaultBranch}`, dir], {
        env: gitEnv(),
      });
    else await createDemoRepository(dir, full);
  }
  return dirs;
}

function gitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
}
