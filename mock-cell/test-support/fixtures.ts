import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { jwtKey, signShellJwt, signWorkhorseJwt } from '../../lib/jwt.js';
import { createLogger } from '../../lib/logger.js';
import { LOCAL_NET, stackPaths, stackPorts } from '../../stack/layout.js';
import { worldTopology } from '../../stack/topology-file-convert.js';
import { demoWorld } from '../../stack/topology-file-load.js';
import { buildCellApp, type CellAppDeps } from '../app.js';
import { TopologyModel } from '../topology.js';
import type { Topology } from '../topology-types.js';

/**
 * The mock cell's tests run on the stack's demo topology (`topologies/demo.json`, seed 000): four
 * cells, cell_us0 legacy; gitlab-org (public projects) in cell_us0, not-my-company and acme.corp in
 * cell_us1, my-company and john.doe in cell_eu0. root is admin, bob Maintainer of gitlab-org, dave
 * Maintainer of my-company, alice Developer and carol Reporter of my-company/my-project only. `main` is
 * protected everywhere (Maintainers push, nobody force-pushes).
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

const DEMO = demoWorld();

/** The demo users as the tests name them (`topologies/demo.json`); `org` is the default organization. */
export const USERS = DEMO.users.map((u) => ({
  id: u.id,
  username: u.username,
  admin: u.admin,
  org: u.defaultOrganization,
}));

export type DemoUser = string;

/** Key id of each demo user's SSH key (the stack gives each key its user's id). */
export const keyIdOf = (username: DemoUser) => DEMO.users.find((u) => u.username === username)?.id as number;

/** The demo projects (`topologies/demo.json`): id, namespace, path (inside the namespace), visibility. */
export const PROJECTS = DEMO.projects.map((p) => ({
  id: p.id,
  namespace: p.namespace,
  path: p.path,
  visibility: p.visibility,
}));

/**
 * The stack's demo topology (`topologies/demo.json`, converted as the stack does) on the default ports, with storages under
 * `storageRoot/<cell>` and each user's key `sshKeyLine(keyId)`. Two differences, for the tests:
 * `externalUrl` is a public name rather than the router's loopback address, and `/explore` is pinned
 * to `cell_eu1` (the demo pins every fixed route to the legacy cell, where a `fixed` answer could not
 * be told from a fallback).
 */
export function demoTopology(storageRoot: string): Topology {
  const paths = { ...stackPaths(storageRoot), storage: (cell: string) => join(storageRoot, cell) };
  const keys = Object.fromEntries(DEMO.users.map((u) => [u.username, sshKeyLine(u.id)]));
  // Through JSON, as the stack writes topology.json: the demo shares one protectedBranches array
  // between its projects, and tests edit theirs.
  const demo = JSON.parse(
    JSON.stringify(worldTopology(DEMO, stackPorts(0), paths, keys, LOCAL_NET)),
  ) as Topology;
  return {
    ...demo,
    externalUrl: 'http://gitlab.example.test:8080/',
    fixedRoutes: demo.fixedRoutes.map((r) => (r.path === '/explore' ? { ...r, cell: 'cell_eu1' } : r)),
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
