import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import { loadSshService } from '../lib/proto.js';
import type { GitalyConfig } from './config.js';
import { GitProcessRegistry, KILL_GRACE_MS } from './git-process.js';
import { defaultHookProgram, installHooks } from './hooks.js';
import { type ServiceContext, sshServiceImplementation } from './ssh-service.js';

export interface GitalyServer {
  server: grpc.Server;
  /** Installs the hooks and binds `config.listen`; resolves with the bound port. */
  start(): Promise<{ port: number }>;
  /** Lets running calls finish for `graceMs`, then kills their git processes and closes everything. */
  stop(graceMs: number): Promise<void>;
}

export interface GitalyServerDeps {
  /** The compiled hook program (defaults to `hook-main.js` beside this module, or in `dist/`). */
  hookProgram?: string;
}

/**
 * Gitaly accepts client keepalive pings down to 10 s (gitaly!4772). grpc-js servers answer pings
 * without enforcing a minimum interval, so these options only state the policy for clients to rely on.
 */
const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 10_000,
};

/** `host:port`, with an IPv6 host in brackets. */
export function formatAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function buildGitalyServer(
  config: GitalyConfig,
  logger: Logger,
  deps: GitalyServerDeps = {},
): GitalyServer {
  const server = new grpc.Server(SERVER_OPTIONS);
  const processes = new GitProcessRegistry();
  const ctx: ServiceContext = { config, logger, processes, hooksDir: undefined };
  server.addService(loadSshService().service, sshServiceImplementation(ctx));
  let tempRuntimeDir: string | undefined;

  async function removeTempRuntimeDir(): Promise<void> {
    if (tempRuntimeDir !== undefined) await rm(tempRuntimeDir, { recursive: true, force: true });
    tempRuntimeDir = undefined;
  }

  async function start(): Promise<{ port: number }> {
    try {
      let runtimeDir = config.runtimeDir;
      if (runtimeDir === undefined) {
        tempRuntimeDir = await mkdtemp(join(tmpdir(), 'mock-gitaly-'));
        runtimeDir = tempRuntimeDir;
      }
      ctx.hooksDir = await installHooks(runtimeDir, deps.hookProgram ?? defaultHookProgram());
      const port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(
          formatAddress(config.listen.host, config.listen.port),
          grpc.ServerCredentials.createInsecure(),
          (err, bound) => (err ? reject(err) : resolve(bound)),
        );
      });
      return { port };
    } catch (err) {
      await removeTempRuntimeDir();
      throw err;
    }
  }

  let stopping: Promise<void> | undefined;

  async function shutdown(graceMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        logger.warn({ running: processes.size }, 'calls still running at shutdown; killing them');
        processes.killAll();
        server.forceShutdown();
        resolve();
      }, graceMs);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    processes.killAll();
    await processes.drained(KILL_GRACE_MS * 2);
    await removeTempRuntimeDir();
  }

  function stop(graceMs: number): Promise<void> {
    stopping ??= shutdown(graceMs);
    return stopping;
  }

  return { server, start, stop };
}
