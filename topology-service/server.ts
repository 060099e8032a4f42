/**
 * @file The Topology Service's two listeners: gRPC (all services) and REST (classify and probes),
 * plain or TLS, with client certificates required when a client CA is configured (mTLS).
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { formatAddress, formatHostPort, hostForUrl } from '../lib/listen-address.js';
import type { Logger } from '../lib/logger.js';
import type { TopologyConfig } from './config.js';
import { TopologyCore } from './core.js';
import { buildGrpcServer } from './grpc.js';
import type { TopologyJournal } from './journal.js';
import { restHandler } from './rest.js';

/** How long running calls may take to finish once stopping, before connections are cut. */
export const SHUTDOWN_GRACE_MS = 5_000;

export interface TopologyService {
  readonly core: TopologyCore;
  /** Binds both listeners; resolves with the fields of the `listening` line. */
  listen(): Promise<ListeningFields>;
  close(graceMs?: number): Promise<void>;
}

export interface ListeningFields extends Record<string, unknown> {
  /** `host:port` of the gRPC listener. */
  grpc: string;
  /** `host:port` of the REST listener. */
  http: string;
  tls: boolean;
  mtls: boolean;
  cells: string[];
}

function grpcCredentials(config: TopologyConfig): grpc.ServerCredentials {
  const tls = config.tls;
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(
    tls.clientCa ?? null,
    [{ private_key: tls.key, cert_chain: tls.cert }],
    tls.clientCa !== undefined,
  );
}

function httpServer(config: TopologyConfig, core: TopologyCore, logger: Logger): HttpServer {
  const handler = restHandler(core);
  const tls = config.tls;
  if (!tls) return createHttpServer(handler);
  const server = createHttpsServer(
    {
      cert: tls.cert,
      key: tls.key,
      ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
      minVersion: 'TLSv1.2',
    },
    handler,
  );
  // Refused client certificates never reach a handler; this line is the only trace of them.
  server.on('tlsClientError', (err, socket) => {
    logger.warn(
      { transport: 'rest', peer: socket.remoteAddress, error: err.message },
      'TLS handshake failed',
    );
  });
  return server;
}

function bindGrpc(server: grpc.Server, config: TopologyConfig): Promise<number> {
  const { host, port } = config.grpcListen;
  return new Promise((resolve, reject) =>
    server.bindAsync(`${hostForUrl(host)}:${port}`, grpcCredentials(config), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
}

function listenHttp(server: HttpServer, config: TopologyConfig): Promise<AddressInfo> {
  const { host, port } = config.httpListen;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function closeHttp(server: HttpServer, graceMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** `journal`: where every call is journaled (the world channel in `main.ts`; nothing by default). */
export function buildTopologyService(
  config: TopologyConfig,
  logger: Logger,
  journal?: TopologyJournal,
): TopologyService {
  const core = new TopologyCore(config, logger, journal);
  const grpcServer = buildGrpcServer(core);
  const http = httpServer(config, core, logger);
  return {
    core,
    async listen() {
      const grpcPort = await bindGrpc(grpcServer, config);
      const bound = await listenHttp(http, config);
      return {
        grpc: formatHostPort(config.grpcListen.host, grpcPort),
        http: formatAddress(bound) as string,
        tls: config.tls !== undefined,
        mtls: config.tls?.clientCa !== undefined,
        cells: config.cells.map((c) => c.name),
      };
    },
    async close(graceMs = SHUTDOWN_GRACE_MS) {
      core.ready = false;
      await Promise.all([shutdownGrpc(grpcServer, graceMs), closeHttp(http, graceMs)]);
    },
  };
}
