import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { jwtKey, signShellJwt, signWorkhorseJwt } from '../../lib/jwt.js';
import { createLogger } from '../../lib/logger.js';
import { buildCellApp, type CellAppDeps } from '../app.js';
import { TopologyModel } from '../topology.js';
import { AccessLevel, type Topology } from '../topology-types.js';

/**
 * A small copy of the architecture.md demo topology (the stack writes the real one): four cells,
 * cell_us0 legacy; gitlab-org (public projects) in cell_us0, not-my-company in cell_us1, my-company in
 * cell_eu0. root is admin, bob Maintainer of gitlab-org, dave Maintainer of my-company, alice Developer
 * and carol Reporter of my-company/my-project only. `main` is protected everywhere (Maintainers push,
 * nobody force-pushes).
 */

export const SHELL_SECRET = 'shell-secret-0123456789abcdef0123';
export const WORKHORSE_SECRET = 'workhorse-secret-0123456789abcdef';
export const GITALY_TOKEN = 'gitaly-token-secret';
export const shellKey = jwtKey(SHELL_SECRET);
export const workhorseKey = jwtKey(WORKHORSE_SECRET);

export const CELLS = ['cell_us0', 'cell_us1', 'cell_eu0', 'cell_eu1'] as const;

/** An OpenSSH ed25519 public key line whose 32 key bytes are all `seed`. */
export function sshKeyLine(seed: number, comment = `key${seed}`): string {
  const str = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  const blob = Buffer.concat([str(Buffer.from('ssh-ed25519')), str(Buffer.alloc(32, seed))]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

export function keyBlob(line: string): string {
  return line.split(' ')[1] as string;
}

export const USERS = [
  { id: 1, username: 'root', admin: true, org: 'gitlab-com-public' },
  { id: 2, username: 'alice', admin: false, org: 'my-organization' },
  { id: 3, username: 'bob', admin: false, org: 'gitlab-com-public' },
  { id: 4, username: 'carol', admin: false, org: 'my-organization' },
  { id: 5, username: 'dave', admin: false, org: 'my-organization' },
] as const;

export type DemoUser = (typeof USERS)[number]['username'];

/** Key id of each demo user's SSH key (same as the user id). */
export const keyIdOf = (username: DemoUser) => USERS.find((u) => u.username === username)?.id as number;

export const PROJECTS = [
  { id: 1, namespace: 'gitlab-org', path: 'gitlab-test', visibility: 'public' },
  { id: 2, namespace: 'gitlab-org', path: 'gitlab', visibility: 'public' },
  { id: 3, namespace: 'my-company', path: 'my-project', visibility: 'private' },
  { id: 4, namespace: 'my-company', path: 'my-other-project', visibility: 'private' },
  { id: 5, namespace: 'not-my-company', path: 'not-my-project', visibility: 'private' },
] as const;

export function demoTopology(storageRoot: string): Topology {
  return {
    externalUrl: 'http://gitlab.example.test:8080/',
    cells: CELLS.map((name, i) => ({
      id: i + 1,
      name,
      legacy: i === 0,
      region: name.includes('_us') ? 'us' : 'eu',
      url: `http://127.0.0.1:${4001 + i}`,
      gitaly: { address: `tcp://127.0.0.1:${9001 + i}`, storages: { default: join(storageRoot, name) } },
    })),
    organizations: [
      { id: 1, path: 'gitlab-com-public', name: 'GitLab.com Public', cell: 'cell_us0' },
      { id: 2, path: 'not-my-organization', name: 'Not My Organization', cell: 'cell_us1' },
      { id: 3, path: 'my-organization', name: 'My Organization', cell: 'cell_eu0' },
    ],
    namespaces: [
      { id: 1, path: 'gitlab-org', name: 'GitLab.org', kind: 'group', organization: 'gitlab-com-public' },
      {
        id: 2,
        path: 'not-my-company',
        name: 'Not My Company',
        kind: 'group',
        organization: 'not-my-organization',
      },
      { id: 3, path: 'my-company', name: 'My Company', kind: 'group', organization: 'my-organization' },
      ...USERS.map((u) => ({
        id: 10 + u.id,
        path: u.username,
        name: u.username,
        kind: 'user' as const,
        organization: u.org,
      })),
    ],
    projects: PROJECTS.map((p) => ({
      ...p,
      name: p.path,
      defaultBranch: 'main',
      storage: 'default',
      protectedBranches: [{ name: 'main', pushAccessLevel: AccessLevel.maintainer, allowForcePush: false }],
    })),
    users: USERS.map((u) => ({
      id: u.id,
      username: u.username,
      name: u.username.toUpperCase(),
      admin: u.admin,
      defaultOrganization: u.org,
      password: `${u.username}-password`,
    })),
    members: [
      { user: 'bob', namespace: 'gitlab-org', accessLevel: AccessLevel.maintainer },
      { user: 'dave', namespace: 'my-company', accessLevel: AccessLevel.maintainer },
      { user: 'alice', project: 'my-company/my-project', accessLevel: AccessLevel.developer },
      { user: 'carol', project: 'my-company/my-project', accessLevel: AccessLevel.reporter },
    ],
    keys: USERS.map((u) => ({
      id: u.id,
      user: u.username,
      title: `${u.username}@demo`,
      key: sshKeyLine(u.id),
    })),
    fixedRoutes: [
      { path: '/admin', cell: 'cell_us0' },
      { path: '/users', cell: 'cell_us0' },
      { path: '/-/profile', cell: 'cell_us0', exact: true },
      { path: '/explore', cell: 'cell_eu1' },
    ],
  };
}

/** A temp folder for storages, removed by `cleanup`. */
export function tempDir(prefix = 'mock-cell-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const silentLogger = createLogger('mock-cell-test', 'silent');

export function demoModel(storageRoot = '/nonexistent/storage', edit?: (t: Topology) => void): TopologyModel {
  const t = demoTopology(storageRoot);
  edit?.(t);
  return TopologyModel.fromJson(t);
}

export function testDeps(overrides: Partial<CellAppDeps> = {}): CellAppDeps {
  return { logger: silentLogger, shellKey, workhorseKey, gitalyToken: GITALY_TOKEN, ...overrides };
}

export function testApp(
  model: TopologyModel,
  cell: string,
  overrides: Partial<CellAppDeps> = {},
): FastifyInstance {
  return buildCellApp(model, cell, testDeps(overrides));
}

/** Headers GitLab Shell (or our router) sends to the internal API. */
export async function shellHeaders(glId?: string): Promise<Record<string, string>> {
  return { 'gitlab-shell-api-request': await signShellJwt(shellKey, glId) };
}

/** Headers the bridge sends when pre-authorizing a tunnel for `glId`. */
export async function preauthHeaders(glId?: string): Promise<Record<string, string>> {
  return {
    'gitlab-workhorse-api-request': await signWorkhorseJwt(workhorseKey),
    ...(glId === undefined ? {} : await shellHeaders(glId)),
  };
}
