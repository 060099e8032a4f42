import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import { type Logger, REDACT_PATHS } from '../../lib/logger.js';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { buildCellApp } from '../../mock-cell/app.js';
import { HookLog } from '../../mock-cell/hook-log.js';
import {
  demoModel,
  GITALY_TOKEN,
  SHELL_SECRET,
  silentLogger,
  WORKHORSE_SECRET,
} from '../../mock-cell/test-support/fixtures.js';
import { loadGitalyConfig } from '../../mock-gitaly/config.js';
import { buildGitalyServer, type GitalyServer } from '../../mock-gitaly/server.js';
import { type Bridge, type BridgeAddresses, type BridgeDeps, buildBridge } from '../app.js';
import { type BridgeConfig, loadBridgeConfig } from '../config.js';
import { type FakeRails, startFakeRails } from './fake-rails.js';

/**
 * The world a bridge test runs in: the real mock Gitaly (in-process, real git) and the real mock
 * cell app serving `cell_eu0` of the mock cell's demo topology (`mock-cell/test-support/fixtures.ts`), plus
 * the fake Rails for what the real cell cannot do. Tunnels pre-authorized by either reach the real
 * mock Gitaly; its git processes are children of the test process.
 */

/** The cell the harness serves; `my-company/*` lives here. */
export const CELL = 'cell_eu0';
/** Private, in this cell: alice Developer, carol Reporter, dave Maintainer; `main` protected. */
export const PROJECT = 'my-company/my-project';
/** Also private in this cell (same members through the group); tests that need a big pack fill it. */
export const BIG_PROJECT = 'my-company/my-other-project';
/** Public, owned by cell_us0: this cell answers 421 + `X-Gitlab-Cell-Redirect: cell_us0`. */
export const OTHER_CELL_PROJECT = 'gitlab-org/gitlab-test';
/** gl_ids of the demo users. */
export const USER = { alice: 'user-2', bob: 'user-3', carol: 'user-4', dave: 'user-5' } as const;

export const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: tmpdir(),
};

export function git(args: string[], cwd?: string): string {
  return execFileSync('git', args, {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects JSON log lines (the bridge's, mock Gitaly's). */
export class LogSink extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
  text(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n');
  }
  tunnels(): Record<string, unknown>[] {
    return this.lines.filter((l) => l.msg === 'tunnel');
  }
  /** Lines logged for one correlation id. */
  correlated(id: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.correlation_id === id);
  }
}

function sinkLogger(sink: LogSink): Logger {
  return pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, sink);
}

export function writeSecret(dir: string, name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** Files of a repository's first commit: `{ 'README.md': '…' }`. */
export type RepoFiles = Record<string, string | Buffer>;

export interface RunningBridge extends BridgeAddresses {
  bridge: Bridge;
  logs: LogSink;
  config: Readonly<BridgeConfig>;
}

export interface Harness {
  dir: string;
  /** The cell's `default` storage, served by the mock Gitaly. */
  storage: string;
  gitaly: { address: string; logs: LogSink; server: GitalyServer };
  /** The real mock cell (Rails) of `CELL`; records the Gitaly hooks' calls. */
  cell: { url: string; hookLog: HookLog };
  rails: FakeRails;
  shellSecret: string;
  workhorseSecret: string;
  gitalyToken: string;
  /** A valid shell JWT for `gl_id` (default alice). */
  token(glId?: string): Promise<string>;
  /** `Repository.relative_path` of a topology project (hashed storage). */
  relativePath(project: string): string;
  /** Creates the bare repository of a topology project with one commit of `files` on `main`. */
  createRepo(project: string, files?: RepoFiles): string;
  /** Starts one more bridge in front of the mock cell (or `railsUrl`); stopped by `close()`. */
  startBridge(overrides?: Record<string, unknown>, deps?: Partial<BridgeDeps>): Promise<RunningBridge>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /**
   * mock Gitaly's hook program (`compilePrograms` in `test/helpers/programs.ts`); without it, pushes
   * that reach the hooks fail.
   */
  hookProgram?: string;
  /** Settings for the mock Gitaly (e.g. `uploadPackNegotiationTimeoutMs`). */
  gitaly?: Record<string, unknown>;
  /** Where the mock Gitaly journals its RPCs (`mock-gitaly/rpc-journal.ts`). */
  gitalyJournal?: (draft: JournalDraft) => void;
  /**
   * Another Gitaly for the mock cell's answers (e.g. the Go peer of `test/interop`): started once
   * the storage folder and the Gitaly token file exist; returns its address. Default: the mock Gitaly.
   */
  cellGitaly?: (world: { storage: string; tokenFile: string }) => Promise<string>;
}

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-test-'));
  const storageRoot = join(dir, 'storage');
  const storage = join(storageRoot, CELL);
  mkdirSync(storage, { recursive: true });
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    while (cleanups.length > 0) await cleanups.pop()?.();
  };

  try {
    // The cell's port first: mock Gitaly's hooks need the cell's URL, the cell's topology needs
    // Gitaly's address. The server hands requests to the cell app once it is built.
    let cellApp: FastifyInstance | undefined;
    const cellServer = http.createServer((req, res) => {
      if (cellApp) cellApp.routing(req, res);
      else res.writeHead(503).end('cell not ready');
    });
    const cellPort = await listen(cellServer);
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          cellServer.closeAllConnections();
          cellServer.close(() => resolve());
        }),
    );
    const cellUrl = `http://127.0.0.1:${cellPort}`;

    const hookProgram = opts.hookProgram ?? join(dir, 'no-hooks.mjs');
    if (!opts.hookProgram) {
      writeFileSync(
        hookProgram,
        "process.stderr.write('this test started mock Gitaly without a hook program\\n');\nprocess.exit(1);\n",
      );
    }
    const gitalyLogs = new LogSink();
    const gitalyConfig = loadGitalyConfig(
      {
        listen: '127.0.0.1:0',
        storages: { default: storage },
        tokenFile: writeSecret(dir, 'gitaly_token', GITALY_TOKEN),
        gitlabUrl: cellUrl,
        gitlabSecretFile: writeSecret(dir, 'gitlab_shell_secret', SHELL_SECRET),
        runtimeDir: join(dir, 'gitaly-runtime'),
        ...opts.gitaly,
      },
      {},
    );
    const gitalyServer = buildGitalyServer(gitalyConfig, sinkLogger(gitalyLogs), {
      hookProgram,
      ...(opts.gitalyJournal ? { journal: opts.gitalyJournal } : {}),
    });
    const { port: gitalyPort } = await gitalyServer.start();
    cleanups.push(() => gitalyServer.stop(500));
    const gitalyAddress = `tcp://127.0.0.1:${gitalyPort}`;
    const cellGitalyAddress = opts.cellGitaly
      ? await opts.cellGitaly({ storage, tokenFile: gitalyConfig.tokenFile })
      : gitalyAddress;

    const model = demoModel(storageRoot, (t) => {
      for (const c of t.cells) c.gitaly.address = cellGitalyAddress;
    });
    const hookLog = new HookLog();
    const app = buildCellApp(model, CELL, {
      logger: silentLogger,
      shellKey: jwtKey(SHELL_SECRET),
      workhorseKey: jwtKey(WORKHORSE_SECRET),
      gitalyToken: GITALY_TOKEN,
      hookLog,
    });
    await app.ready();
    cellApp = app;
    cleanups.push(() => app.close());

    const rails = await startFakeRails({
      shellKey: jwtKey(SHELL_SECRET),
      workhorseKey: jwtKey(WORKHORSE_SECRET),
      gitalyAddress,
      gitalyToken: GITALY_TOKEN,
    });
    cleanups.push(() => rails.close());

    const relativePath = (project: string) => {
      const p = model.projectByPath(project);
      if (!p) throw new Error(`no project ${project} in the demo topology`);
      return hashedRepoPath(p.id);
    };

    return {
      dir,
      storage,
      gitaly: { address: gitalyAddress, logs: gitalyLogs, server: gitalyServer },
      cell: { url: cellUrl, hookLog },
      rails,
      shellSecret: SHELL_SECRET,
      workhorseSecret: WORKHORSE_SECRET,
      gitalyToken: GITALY_TOKEN,
      token: (glId = USER.alice) => signShellJwt(jwtKey(SHELL_SECRET), glId),
      relativePath,
      createRepo(project, files = { 'README.md': '# hello through the bridge\n' }) {
        const bare = join(storage, relativePath(project));
        mkdirSync(bare, { recursive: true });
        const inRepo = (args: string[], input?: string | Buffer) =>
          execFileSync('git', ['--git-dir', bare, ...args], { env: GIT_ENV, input, encoding: 'utf8' }).trim();
        inRepo(['init', '--bare', '--quiet', '--initial-branch=main']);
        // Big test files are random: storing them uncompressed keeps writing and packing them cheap.
        inRepo(['config', 'core.compression', '0']);
        const entries = Object.entries(files).map(
          ([name, content]) => `100644 blob ${inRepo(['hash-object', '-w', '--stdin'], content)}\t${name}\n`,
        );
        const tree = inRepo(['mktree'], entries.join(''));
        inRepo(['update-ref', 'refs/heads/main', inRepo(['commit-tree', tree, '-m', 'first'])]);
        return bare;
      },
      async startBridge(overrides = {}, deps = {}) {
        const config = loadBridgeConfig(
          {
            listen: '127.0.0.1:0',
            railsUrl: cellUrl,
            shellSecretFile: '/unused',
            workhorseSecretFile: '/unused',
            metricsListen: '127.0.0.1:0',
            shutdownGraceMs: 2000,
            ...overrides,
          },
          {},
        );
        const logs = new LogSink();
        const bridge = await buildBridge(config, {
          logger: sinkLogger(logs),
          shellSecret: SHELL_SECRET,
          workhorseSecret: WORKHORSE_SECRET,
          ...deps,
        });
        // Started last, so stopped first: before the services behind it.
        cleanups.push(() => bridge.close());
        const addresses = await bridge.listen();
        return { ...addresses, bridge, logs, config };
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
