import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import { REDACT_PATHS } from '../../lib/logger.js';
import { type Bridge, type BridgeAddresses, type BridgeDeps, buildBridge } from '../app.js';
import { type BridgeConfig, loadBridgeConfig } from '../config.js';
import { type FakeGitaly, startFakeGitaly } from './fake-gitaly.js';
import { type FakeRails, startFakeRails } from './fake-rails.js';

export const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
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

/** A bare repository at `<storage>/<relative>` with one commit on `main`. */
export function createRepo(storage: string, relative: string): string {
  const bare = join(storage, relative);
  mkdirSync(bare, { recursive: true });
  git(['init', '--bare', '--quiet', '--initial-branch=main', bare]);
  const work = mkdtempSync(join(tmpdir(), 'bridge-work-'));
  try {
    git(['init', '--quiet', '--initial-branch=main', work]);
    writeFileSync(join(work, 'README.md'), '# hello through the bridge\n');
    git(['add', 'README.md'], work);
    git(['commit', '--quiet', '-m', 'first'], work);
    git(['push', '--quiet', bare, 'main'], work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return bare;
}

/** Collects the bridge's JSON log lines. */
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
}

export interface RunningBridge extends BridgeAddresses {
  bridge: Bridge;
  logs: LogSink;
  config: Readonly<BridgeConfig>;
}

export interface Harness {
  dir: string;
  storage: string;
  gitaly: FakeGitaly;
  rails: FakeRails;
  shellSecret: string;
  workhorseSecret: string;
  gitalyToken: string;
  /** A valid shell JWT for `gl_id` (default `user-2`). */
  token(glId?: string): Promise<string>;
  /** Starts one more bridge in front of the fake Rails; stopped by `close()`. */
  startBridge(overrides?: Record<string, unknown>, deps?: Partial<BridgeDeps>): Promise<RunningBridge>;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-test-'));
  const storage = join(dir, 'storage');
  mkdirSync(storage);
  const shellSecret = randomBytes(16).toString('hex');
  const workhorseSecret = randomBytes(16).toString('hex');
  const gitalyToken = randomBytes(16).toString('hex');
  const gitaly = await startFakeGitaly({ storage, token: gitalyToken });
  const rails = await startFakeRails({
    shellKey: jwtKey(shellSecret),
    workhorseKey: jwtKey(workhorseSecret),
    gitalyAddress: gitaly.address,
    gitalyToken,
  });
  const bridges: Bridge[] = [];
  return {
    dir,
    storage,
    gitaly,
    rails,
    shellSecret,
    workhorseSecret,
    gitalyToken,
    token: (glId = 'user-2') => signShellJwt(jwtKey(shellSecret), glId),
    async startBridge(overrides = {}, deps = {}) {
      const config = loadBridgeConfig(
        {
          listen: '127.0.0.1:0',
          railsUrl: rails.url,
          shellSecretFile: '/unused',
          workhorseSecretFile: '/unused',
          metricsListen: '127.0.0.1:0',
          shutdownGraceMs: 2000,
          ...overrides,
        },
        {},
      );
      const logs = new LogSink();
      const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, logs);
      const bridge = await buildBridge(config, { logger, shellSecret, workhorseSecret, ...deps });
      bridges.push(bridge);
      const addresses = await bridge.listen();
      return { ...addresses, bridge, logs, config };
    },
    async close() {
      await Promise.all(bridges.map((b) => b.close()));
      await rails.close();
      await gitaly.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
