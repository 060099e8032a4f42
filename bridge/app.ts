import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { jwtKey } from '../lib/jwt.js';
import type { Logger } from '../lib/logger.js';
import type { BridgeConfig } from './config.js';
import { ShuttingDown } from './errors.js';
import { Exchange, type ServerReply, type ServerRequest } from './exchange.js';
import { gitalyConnections } from './gitaly-client.js';
import { TunnelLimiter } from './limits.js';
import { ProtocolListener } from './listener.js';
import { BridgeMetrics } from './metrics.js';
import { buildMetricsServer } from './metrics-server.js';
import { registerProxy } from './proxy.js';
import { matchTunnel } from './routes.js';
import { handleTunnel, type TunnelContext } from './tunnel.js';
import type { TunnelStream } from './tunnel-stream.js';

export interface BridgeDeps {
  logger: Logger;
  /** Contents of `shellSecretFile` and `workhorseSecretFile`. */
  shellSecret: string;
  workhorseSecret: string;
  /** PEM certificate and key when TLS is enabled. */
  tls?: { cert: Buffer | string; key: Buffer | string };
  /** Contents of `gitalyCaFile`, trusted for `tls://` Gitaly addresses. */
  gitalyCa?: Buffer;
}

export interface BridgeAddresses {
  /** `http://host:port` of the tunnel/proxy port. */
  url: string;
  port: number;
  /** `http://host:port` of the metrics listener, when configured. */
  metricsUrl: string | undefined;
}

export interface Bridge {
  listen(): Promise<BridgeAddresses>;
  /** Graceful: stop accepting, readiness fails, tunnels get `shutdownGraceMs`, then are cancelled. */
  close(): Promise<void>;
  readonly metrics: BridgeMetrics;
  /** Requests being served right now (tunnels and proxied). */
  readonly inFlight: number;
}

const MIB = 1024 * 1024;

/** Builds the bridge (servers, routes, clients) without binding any port. */
export async function buildBridge(config: Readonly<BridgeConfig>, deps: BridgeDeps): Promise<Bridge> {
  const logger = deps.logger;
  const metrics = new BridgeMetrics();
  const agents = {
    http: new http.Agent({ keepAlive: true }),
    https: new https.Agent({ keepAlive: true }),
  };
  const gitaly = gitalyConnections(config, {
    ...(deps.gitalyCa ? { ca: deps.gitalyCa } : {}),
    onRefusedStream: (address, reason) => logger.warn({ gitaly: address, reason }, 'sidechannel refused'),
  });
  const active = new Set<TunnelStream>();
  let closing = false;
  let inFlight = 0;
  const idleWaiters = new Set<() => void>();

  const ctx: TunnelContext = {
    config,
    logger,
    metrics,
    limiter: new TunnelLimiter(config.maxTunnels, config.maxTunnelsPerUser),
    gitaly,
    shellKey: jwtKey(deps.shellSecret),
    workhorseKey: jwtKey(deps.workhorseSecret),
    agents,
    active,
    isClosing: () => closing,
  };

  const dispatch = (req: ServerRequest, res: ServerReply) => {
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) for (const wake of idleWaiters) wake();
    });
    if (closing && req.httpVersionMajor === 1) res.setHeader('connection', 'close');
    const match = matchTunnel(req.method, req.url);
    if (!match) {
      // Fastify reads only what both protocols' request objects share (it checks httpVersionMajor).
      app.routing(req as http.IncomingMessage, res as http.ServerResponse);
      return;
    }
    const ex = new Exchange(req, res);
    handleTunnel(ex, match, ctx).catch((err: unknown) => {
      logger.error({ err, route: match.route.id }, 'tunnel handler failed');
      if (!ex.headersSent)
        ex.reject(500, { 'content-type': 'text/plain; charset=utf-8' }, 'Internal Server Error\n');
      else ex.destroy();
    });
  };

  const h1 = http.createServer(
    {
      requestTimeout: 0,
      headersTimeout: config.headersTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      noDelay: true,
    },
    dispatch,
  );
  // The listener hands sockets to this server, which never listens itself; this starts its
  // connection tracking (headers timeout, idle connection closing) as listen() would.
  h1.emit('listening');

  const h2 = http2.createServer(
    {
      settings: { initialWindowSize: config.h2StreamWindowBytes, enablePush: false },
      maxSessionMemory: Math.ceil((2 * config.h2ConnectionWindowBytes) / MIB) + 16,
    },
    dispatch,
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', (err) => logger.debug({ err }, 'HTTP/2 session error'));
    session.setLocalWindowSize(config.h2ConnectionWindowBytes);
  });

  const app = Fastify({ logger: false, serverFactory: () => h1 });
  app.get('/-/bridge/health', async (_request, reply) => {
    if (closing) return reply.code(503).send({ status: 'shutting-down' });
    return { status: 'ok' };
  });
  registerProxy(app, { railsUrl: config.railsUrl, agents, logger, metrics });
  await app.ready();

  if (config.tlsCertFile && !deps.tls) throw new Error('tlsCertFile is set but no certificate was passed');
  const listener = new ProtocolListener({
    h1,
    h2,
    tls: deps.tls,
    handshakeTimeoutMs: config.headersTimeoutMs,
    logger,
  });
  const metricsServer = config.metricsListen ? buildMetricsServer(metrics, () => closing) : undefined;

  const waitIdle = (ms: number) =>
    new Promise<void>((resolve) => {
      if (inFlight === 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        idleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      idleWaiters.add(done);
    });

  return {
    metrics,
    get inFlight() {
      return inFlight;
    },
    async listen() {
      const addr = await listener.listen(config.listen.host, config.listen.port);
      let metricsUrl: string | undefined;
      if (metricsServer && config.metricsListen) {
        await metricsServer.listen({ host: config.metricsListen.host, port: config.metricsListen.port });
        const m = metricsServer.server.address() as AddressInfo;
        metricsUrl = `http://${hostForUrl(m.address)}:${m.port}`;
      }
      return { url: `http://${hostForUrl(addr.address)}:${addr.port}`, port: addr.port, metricsUrl };
    },
    async close() {
      if (closing) return;
      closing = true;
      listener.stopAccepting();
      for (const session of sessions) session.close();
      h1.closeIdleConnections();
      await waitIdle(config.shutdownGraceMs);
      for (const tunnel of active) {
        tunnel.abort(
          ShuttingDown('The server is shutting down; the git operation was interrupted.'),
          'system',
        );
      }
      await waitIdle(1000);
      listener.destroyAll();
      h1.close();
      gitaly.close();
      agents.http.destroy();
      agents.https.destroy();
      await app.close();
      await metricsServer?.close();
    },
  };
}

function hostForUrl(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}
