import * as http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../lib/logger.js';
import {
  DEFAULT_MAX_FRAME_DATA,
  INITIAL_WINDOW,
  YamuxSession,
  type YamuxStream,
  YOUNG_GC_PACE_BYTES,
} from '../lib/yamux/index.js';
import type { GitalyConfig } from './config.js';

/** Gitaly's server-side yamux receive window (`MaximumStreamWindowSizeBytes`). */
export const GITALY_STREAM_WINDOW = 16 * 1024 * 1024;
/** libp2p go-yamux measures the RTT with a ping at session start and then every 30 s. */
export const LIBP2P_PING_INTERVAL_MS = 30_000;

/** The yamux settings of a Gitaly server session, per emulated flavour (doc §2.6, §2.7). */
export function yamuxServerOptions(flavour: GitalyConfig['yamuxFlavour']) {
  const libp2p = flavour === 'libp2p';
  return {
    role: 'server' as const,
    acceptBacklog: 1,
    // libp2p grants nothing beyond the initial 256 KiB at SYN/ACK and caps Data frames at 64 KiB;
    // hashicorp grants 16 MiB − 256 KiB at once and sends frames as large as the peer's window.
    maxStreamWindow: libp2p ? INITIAL_WINDOW : GITALY_STREAM_WINDOW,
    maxFrameData: libp2p ? DEFAULT_MAX_FRAME_DATA : GITALY_STREAM_WINDOW,
    keepAliveIntervalMs: 0,
    // git's output leaves through here (read from its pipe just before): see lib/yamux/young-gc.ts.
    youngGcEveryBytes: YOUNG_GC_PACE_BYTES,
  };
}

export interface BackchannelDeps {
  config: GitalyConfig;
  logger: Logger;
  /** A gRPC server whose SSHService opens sidechannels on `session`. */
  makeServer(session: YamuxSession): grpc.Server;
}

interface LiveSession {
  session: YamuxSession;
  server: grpc.Server;
}

/**
 * Gitaly's backchannel server handshake, one per connection that wrote `backchannel`: a yamux server
 * session whose first client stream carries the client's gRPC (served by a grpc-js server of its own,
 * so a handler knows which session to open sidechannels on). Later client streams are refused (RST;
 * Gitaly accepts only one). Emulations: the eager HTTP/2 backchannel of Gitaly < 17.11 and libp2p's
 * RTT pings.
 */
export class BackchannelSessions {
  private readonly live = new Set<LiveSession>();

  constructor(private readonly deps: BackchannelDeps) {}

  serve(socket: Duplex): void {
    const { config } = this.deps;
    const logger = this.deps.logger.child({ backchannel: true });
    const session = new YamuxSession(socket, yamuxServerOptions(config.yamuxFlavour));
    const server = this.deps.makeServer(session);
    const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    const entry: LiveSession = { session, server };
    this.live.add(entry);
    const cleanups: Array<() => void> = [];
    let accepted = false;
    session.on('stream', (stream) => {
      if (accepted) {
        logger.warn({ stream: stream.id }, 'client opened a second stream; refusing it');
        stream.destroy();
        return;
      }
      accepted = true;
      stream.on('error', (err) => logger.debug({ err: err.message }, 'gRPC stream error'));
      injector.injectConnection(stream);
      if (config.eagerBackchannel) cleanups.push(openEagerBackchannel(session, logger));
    });
    if (config.yamuxFlavour === 'libp2p') cleanups.push(startRttPings(session));
    session.on('close', (err) => {
      logger.debug({ err: err?.message }, 'backchannel session closed');
      this.live.delete(entry);
      for (const cleanup of cleanups) cleanup();
      // Cancels the session's calls, which kills their git.
      server.forceShutdown();
      socket.destroy();
    });
  }

  /** The per-session gRPC servers, for a graceful shutdown. */
  get servers(): grpc.Server[] {
    return [...this.live].map((s) => s.server);
  }

  get size(): number {
    return this.live.size;
  }

  closeAll(): void {
    for (const { session } of this.live) session.close();
  }
}

/**
 * Gitaly < 17.11 dialled its gRPC client back to the caller at handshake (`grpc.Dial` leaves idle at
 * once): a yamux stream with an HTTP/2 client preface. The client must ACK it and may serve or reset
 * it; either way the session goes on.
 */
function openEagerBackchannel(session: YamuxSession, logger: Logger): () => void {
  let stream: YamuxStream;
  try {
    stream = session.open();
  } catch (err) {
    logger.debug({ err: (err as Error).message }, 'cannot open the eager backchannel');
    return () => {};
  }
  stream.on('error', (err) => logger.debug({ err: err.message }, 'eager backchannel stream error'));
  const client = http2.connect('http://multiplexed', { createConnection: () => stream });
  client.on('error', (err) => logger.debug({ err: err.message }, 'eager backchannel HTTP/2 error'));
  client.on('remoteSettings', () => logger.debug('eager backchannel: the client serves HTTP/2'));
  return () => client.destroy();
}

/** libp2p go-yamux's `startMeasureRTT`: a ping at once, then every 30 s; failures are ignored. */
function startRttPings(session: YamuxSession): () => void {
  const ping = () => void session.ping().catch(() => {});
  ping();
  const timer = setInterval(ping, LIBP2P_PING_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
