import http from 'node:http';
import http2 from 'node:http2';
import type { Logger } from '../lib/logger.js';
import type { BridgeConfig } from './config.js';
import type { ServerReply, ServerRequest } from './exchange.js';

const MIB = 1024 * 1024;

/** The HTTP/1.1 and HTTP/2 servers behind the protocol listener; neither listens itself. */
export interface HttpServers {
  h1: http.Server;
  h2: http2.Http2Server;
  /** GOAWAY to every HTTP/2 session: no new streams, the running ones finish. */
  closeSessions(): void;
}

/** How often Node looks for connections past the headers timeout: a quarter of it, 250 ms to 30 s. */
export const headersCheckIntervalMs = (headersTimeoutMs: number) =>
  Math.min(30_000, Math.max(250, Math.floor(headersTimeoutMs / 4)));

export function createHttpServers(
  config: Readonly<BridgeConfig>,
  onRequest: (req: ServerRequest, res: ServerReply) => void,
  logger: Logger,
): HttpServers {
  const h1 = http.createServer(
    {
      requestTimeout: 0,
      headersTimeout: config.headersTimeoutMs,
      // Node checks the headers timeout only every `connectionsCheckingInterval` (30 s by default):
      // a slowloris would be held up to that long past its timeout.
      connectionsCheckingInterval: headersCheckIntervalMs(config.headersTimeoutMs),
      keepAliveTimeout: config.keepAliveTimeoutMs,
      noDelay: true,
    },
    onRequest,
  );
  // The listener hands sockets to this server, which never listens itself; this starts its
  // connection tracking (headers timeout, idle connection closing) as listen() would.
  h1.emit('listening');

  const h2 = http2.createServer(
    {
      settings: { initialWindowSize: config.h2StreamWindowBytes, enablePush: false },
      maxSessionMemory: Math.ceil((2 * config.h2ConnectionWindowBytes) / MIB) + 16,
    },
    onRequest,
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', (err) => logger.debug({ err }, 'HTTP/2 session error'));
    session.setLocalWindowSize(config.h2ConnectionWindowBytes);
  });
  return {
    h1,
    h2,
    closeSessions: () => {
      for (const session of sessions) session.close();
    },
  };
}
