import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import { BackchannelSessions } from './backchannel.js';
import type { GitalyConfig } from './config.js';
import { GitProcessRegistry, KILL_GRACE_MS } from './git-process.js';
import { shutdownServers, sshServerFactory } from './grpc-servers.js';
import { defaultHookProgram, installHooks } from './hooks.js';
import { type BoundAddresses, Listeners } from './listener.js';
import { QuarantineSweeper } from './quarantine.js';
import { RuntimeDir } from './runtime-dir.js';
import type { ServiceContext } from './ssh-service.js';
import { type GitalyJournal, type GitalyWorld, gitalyWorld } from './world.js';

export interface GitalyServer {
  /** Installs the hooks and binds the listeners; resolves with what was bound. */
  start(): Promise<BoundAddresses>;
  /** Lets running calls finish for `graceMs`, then kills their git processes and closes everything. */
  stop(graceMs: number): Promise<void>;
  /** Live backchannel (yamux) sessions, for tests. */
  readonly backchannelSessions: number;
  /** Its faults, cell and journal, for the control ops (`main.ts`) and tests. */
  readonly world: GitalyWorld;
}

export interface GitalyServerDeps {
  /** The compiled hook program (defaults to `hook-main.js` beside this module, or in `dist/`). */
  hookProgram?: string;
  /** Where every RPC is journaled (the world channel in `main.ts`; nothing by default). */
  journal?: GitalyJournal;
}

/** What one mock Gitaly runs: its git processes, gRPC servers, listeners and runtime folder. */
interface Parts {
  logger: Logger;
  ctx: ServiceContext;
  processes: GitProcessRegistry;
  plain: grpc.Server;
  sessions: BackchannelSessions;
  listeners: Listeners;
  runtimeDir: RuntimeDir;
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
  const quarantine = config.quarantineSweep
    ? new QuarantineSweeper({
        storages: config.storages,
        logger: logger.child({ component: 'quarantine-sweep' }),
        intervalMs: config.quarantineSweepIntervalMs,
      })
    : undefined;
  const world = gitalyWorld(config.cell, deps.journal, config.concurrency);
  const ctx: ServiceContext = { config, logger, processes, hooksDir: undefined, quarantine, world };
  const makeServer = sshServerFactory(ctx);
  const plain = makeServer();
  const plainInjector = plain.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const sessions = new BackchannelSessions({ config, logger, makeServer });
  const listeners = new Listeners(config, logger, {
    backchannel: (socket) => sessions.serve(socket),
    plain: (socket) => plainInjector.injectConnection(socket),
  });
  const parts: Parts = {
    logger,
    ctx,
    processes,
    plain,
    sessions,
    listeners,
    runtimeDir: new RuntimeDir(config.runtimeDir),
  };
  let stopping: Promise<void> | undefined;
  return {
    start: () => installAndListen(parts, deps),
    stop(graceMs: number): Promise<void> {
      stopping ??= shutdown(parts, graceMs);
      return stopping;
    },
    get backchannelSessions() {
      return sessions.size;
    },
    world,
  };
}

/** Installs the hooks in the runtime folder and binds the listeners; undoes both on failure. */
async function installAndListen(parts: Parts, deps: GitalyServerDeps): Promise<BoundAddresses> {
  const { ctx, listeners, runtimeDir } = parts;
  try {
    const dir = await runtimeDir.acquire();
    ctx.hooksDir = await installHooks(dir, deps.hookProgram ?? defaultHookProgram());
    // What a killed predecessor left (its pushes' quarantines), once their processes are gone.
    ctx.quarantine?.start();
    return await listeners.start();
  } catch (err) {
    listeners.close();
    await ctx.quarantine?.stop();
    await runtimeDir.removeTemp();
    throw err;
  }
}

async function shutdown(parts: Parts, graceMs: number): Promise<void> {
  const { logger, processes, plain, sessions, listeners, runtimeDir } = parts;
  listeners.close();
  await shutdownServers([plain, ...sessions.servers], graceMs, () => {
    logger.warn({ running: processes.size }, 'calls still running at shutdown; killing them');
    processes.killAll();
  });
  processes.killAll();
  await processes.drained(KILL_GRACE_MS * 2);
  sessions.closeAll();
  listeners.destroySockets();
  await parts.ctx.quarantine?.stop();
  await runtimeDir.removeTemp();
}
