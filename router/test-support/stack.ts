import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { buildRouter, type Router, type RouterAddresses } from '../app.js';
import type { CellProtocol } from '../cells/transport.js';
import { type RouterConfig, routerSchema } from '../config.js';
import { type KeyPair, makeKeyPair } from './clients.js';
import { createWorld, type FakeCell, startFakeCells, type World } from './fake-cell.js';
import { createBareRepo } from './git-repos.js';

/**
 * A router wired to fake cells on loopback, with temp repositories and keys:
 * cells `cell_us0` (legacy, us), `cell_us1` (us), `cell_eu0` (eu), `cell_eu1` (eu); router region eu.
 * User alice (key 11) is known; `strangerKey` is not.
 */
export interface TestStack {
  dir: string;
  world: World;
  cells: Map<string, FakeCell>;
  router: Router;
  addresses: RouterAddresses;
  sshPort: number;
  alice: KeyPair;
  stranger: KeyPair;
  cell(name: string): FakeCell;
  /** Adds a project with a fresh bare repository. */
  addProject(path: string, cell: string, files?: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

export const CELLS = [
  { id: 1, name: 'cell_us0', legacy: true, region: 'us' },
  { id: 2, name: 'cell_us1', legacy: false, region: 'us' },
  { id: 3, name: 'cell_eu0', legacy: false, region: 'eu' },
  { id: 4, name: 'cell_eu1', legacy: false, region: 'eu' },
];

export interface TestStackOptions {
  /** What the fake cells speak and the router's `cellProtocol` says (default `http1`). */
  protocol?: CellProtocol;
}

export async function startTestStack(
  overrides: Partial<Record<keyof RouterConfig, unknown>> = {},
  options: TestStackOptions = {},
): Promise<TestStack> {
  const protocol = options.protocol ?? 'http1';
  const dir = mkdtempSync(join(tmpdir(), 'router-test-'));
  const secret = 'a'.repeat(32);
  const secretFile = join(dir, 'gitlab_shell_secret');
  writeFileSync(secretFile, secret, { mode: 0o600 });
  const world = createWorld(secret, 'cell_us0');
  const [alice, stranger] = await Promise.all([
    makeKeyPair(join(dir, 'alice')),
    makeKeyPair(join(dir, 'stranger')),
  ]);
  world.users.push({ id: 2, username: 'alice' });
  world.keys.push({ id: 11, userId: 2, blob: alice.blob });
  const cells = await startFakeCells(
    CELLS.map((c) => c.name),
    world,
    protocol,
  );
  const config = loadConfig(routerSchema, {
    prefix: 'ROUTER_TEST',
    env: {},
    file: {
      sshListen: '127.0.0.1:0',
      httpListen: '127.0.0.1:0',
      hostKeyFile: join(dir, 'host', 'ssh_host_ed25519_key'),
      shellSecretFile: secretFile,
      region: 'eu',
      cells: CELLS.map((c) => ({ ...c, url: cells.get(c.name)?.url })),
      cellProtocol: protocol,
      logLevel: 'silent',
      ...overrides,
    },
  });
  const router = await buildRouter(config, {
    log: createLogger('router', process.env.ROUTER_TEST_LOG_LEVEL ?? config.logLevel),
  });
  const addresses = await router.listen();
  let repoCount = 0;
  return {
    dir,
    world,
    cells,
    router,
    addresses,
    sshPort: addresses.ssh.port,
    alice,
    stranger,
    cell(name) {
      const c = cells.get(name);
      if (!c) throw new Error(`no cell ${name}`);
      return c;
    },
    async addProject(path, cell, files = { 'README.md': `# ${path}\n` }) {
      const repo = join(dir, 'repos', `${++repoCount}.git`);
      await createBareRepo(repo, files);
      world.projects.push({ path, cell, repo });
      return repo;
    },
    async close() {
      await router.close();
      await Promise.all([...cells.values()].map((c) => c.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
