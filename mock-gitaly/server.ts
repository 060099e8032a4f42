import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import { loadSshService } from '../lib/proto.js';
import type { YamuxSession } from '../lib/yamux/index.js';
import { BackchannelSessions } from './backchannel.js';
import type { GitalyConfig } from './config.js';
import { GitProcessRegistry, KILL_GRACE_MS } from './git-process.js';
import { defaultHookProgram, installHooks } from './hooks.js';
import { type BoundAddresses, Listeners } from './listener.js';
import { type ServiceContext, sshServiceImplementation } from './ssh-service.js';

export interface GitalyServer {
  /** Installs the hooks and binds the listeners; resolves with what was bound. */
  start(): Promise<BoundAddresses>;
  /** Lets running calls finish for `graceMs`, then kills their git processes and closes everything. */
  stop(graceMs: number): Promise<void>;
  /** Live backchannel (yamux) sessions, for tests. */
  readonly backchannelSessions: number;
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

/** tryShutdown on every server; after `graceMs`, `onTimeout` and forceShutdown. */
async function shutdownServers(servers: grpc.Server[], graceMs: number, onTimeout: () => void) {
  await new Promise<void>((resolve) => {
    let pending = servers.length;
    const timer = setTimeout(() => {
      onTimeout();
      for (const server of servers) server.forceShutdown();
      resolve();
    }, graceMs);
    const one = () => {
      pending -= 1;
      if (pending > 0) return;
      clearTimeout(timer);
      resolve();
    };
    if (pending === 0) one();
    for (const server of servers) server.tryShutdown(one);
  });
}

/**
 * mock Gitaly: one set of listeners (TCP, optional TLS and unix) where each connection is either a
 * backchannel (yamux; its own grpc-js server per session, so `SSHUploadPackWithSidechannel` can open
 * sidechannels on it) or plain gRPC (one shared grpc-js server), as Gitaly's listenmux does.
 */
export function buildGitalyServer(
  config: GitalyConfig,
  logger: Logger,
  deps: GitalyServerDeps = {},
): GitalyServer {
  const processes = new GitProcessRegistry();
  const ctx: ServiceContext = { config, logger, processes, hooksDir: undefined };
  const service = loadSshService().service;
  const makeServer = (session?: YamuxSession) => {
    const server = new grpc.Server(SERVER_OPTIONS);
    server.addService(service, sshServiceImplementation(ctx, session));
    return server;
  };
  const plain = makeServer();
  const plainInjector = plain.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const sessions = new BackchannelSessions({ config, logger, makeServer });
  const listeners = new Listeners(config, logger, {
    backchannel: (socket) => sessions.serve(socket),
    plain: (socket) => plainInjector.injectConnection(socket),
  });
  let tempRuntimeDir: string | undefined;

  async function removeTempRuntimeDir(): Promise<void> {
    if (tempRuntimeDir !== undefined) await rm(tempRuntimeDir, { recursive: true, force: true });
    tempRuntimeDir = undefined;
  }

  async function start(): Promise<BoundAddresses> {
    try {
      let runtimeDir = config.runtimeDir;
      if (runtimeDir === undefined) {
        tempRuntimeDir = await mkdtemp(join(tmpdir(), 'mock-gitaly-'));
        runtimeDir = tempRuntimeDir;
      }
      ctx.hooksDir = await installHooks(runtimeDir, deps.hookProgram ?? defaultHookProgram());
      return await listeners.start();
    } catch (err) {
      listeners.close();
      await removeTempRuntimeDir();
      throw err;
    }
  }

  let stopping: Promise<void> | undefined;

  async function shutdown(graceMs: number): Promise<void> {
    listeners.close();
    await shutdownServers([plain, ...sessions.servers], graceMs, () => {
      logger.warn({ running: processes.size }, 'calls still running at shutdown; killing them');
      processes.killAll();
    });
    processes.killAll();
    await processes.drained(KILL_GRACE_MS * 2);
    sessions.closeAll();
    listeners.destroySockets();
    await removeTempRuntimeDir();
  }

  function stop(graceMs: number): Promise<void> {
    stopping ??= shutdown(graceMs);
    return stopping;
  }

  return {
    start,
    stop,
    get backchannelSessions() {
      return sessions.size;
    },
  };
}
