import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { JournalDraft } from '../lib/contracts/world.js';
import type { GitalyConnections } from '../lib/gitaly/index.js';
import { jwtKey } from '../lib/jwt.js';
import { httpUrl } from '../lib/listen-address.js';
import type { Logger } from '../lib/logger.js';
import type { BridgeConfig } from './config.js';
import { ShuttingDown } from './errors.js';
import { infoRefsHandler, receivePackHandler, uploadPackHandler } from './git-http/handlers.js';
import { lfsUploadHandler } from './git-http/lfs-upload.js';
import { gitalyConnections } from './gitaly-client.js';
import { healthHandler } from './health.js';
import { RequestTracker, TunnelRegistry } from './in-flight.js';
import type { BridgeJournal } from './journal.js';
import { TunnelLimiter } from './limits.js';
import { ProtocolListener } from './listener.js';
import { BridgeMetrics } from './metrics.js';
import { buildMetricsServer, closeServer, listenOn } from './metrics-server.js';
import { dispatcher } from './observe.js';
import { proxyHandler } from './proxy.js';
import { type Route, routeTable } from './routes.js';
import { createHttpServers, type HttpServers } from './servers.js';
import { type TunnelContext, tunnelHandler } from './tunnel.js';

export interface BridgeDeps {
  logger: Logger;
  /** Contents of `shellSecretFile` and `workhorseSecretFile`. */
  shellSecret: string;
  workhorseSecret: string;
  /** PEM certificate and key when TLS is enabled. */
  tls?: { cert: Buffer | string; key: Buffer | string };
  /** Contents of `gitalyCaFile`, trusted for `tls://` Gitaly addresses. */
  gitalyCa?: Buffer;
  /** Where every request is journaled (the world channel in `main.ts`; nowhere by default). */
  journal?: (draft: JournalDraft) => void;
}

export interface BridgeAddresses {
  /** `http://host:port` of the tunnel/proxy port. */
  url: string;
  port: number;
  /** `http://host:port` of the metrics listener, when configured. */
  metricsUrl: string | undefined;
  /** `http://host:port` of the shell endpoint (`shellListen`), when configured. */
  shellUrl: string | undefined;
}

export interface Bridge {
  listen(): Promise<BridgeAddresses>;
  /** Graceful: stop accepting, readiness fails, tunnels get `shutdownGraceMs`, then are cancelled. */
  close(): Promise<void>;
  readonly metrics: BridgeMetrics;
  /** Requests being served right now (every route). */
  readonly inFlight: number;
}

/** Builds the bridge (servers, route table, clients) without binding any port. */
export async function buildBridge(config: Readonly<BridgeConfig>, deps: BridgeDeps): Promise<Bridge> {
  if (config.tlsCertFile && !deps.tls) throw new Error('tlsCertFile is set but no certificate was passed');
  return new BridgeService(config, deps);
}

class BridgeService implements Bridge {
  readonly metrics = new BridgeMetrics();
  private closing = false;
  private readonly requests = new RequestTracker();
  private readonly tunnels = new TunnelRegistry();
  private readonly agents = {
    http: new http.Agent({ keepAlive: true }),
    https: new https.Agent({ keepAlive: true }),
  };
  private readonly gitaly: GitalyConnections;
  private readonly servers: HttpServers;
  private readonly listener: ProtocolListener;
  /** The shell endpoint (`shellListen`): a second port for the same servers. */
  private readonly shellListener: ProtocolListener | undefined;
  private readonly metricsServer: http.Server | undefined;
  private mainBound: AddressInfo | undefined;
  private shellBound: AddressInfo | undefined;

  constructor(
    private readonly config: Readonly<BridgeConfig>,
    deps: BridgeDeps,
  ) {
    const { logger } = deps;
    const isClosing = () => this.closing;
    this.gitaly = gitalyConnections(config, {
      ...(deps.gitalyCa ? { ca: deps.gitalyCa } : {}),
      onRefusedStream: (address, reason) => logger.warn({ gitaly: address, reason }, 'sidechannel refused'),
    });
    const table = this.routes(deps, isClosing);
    const onRequest = dispatcher(table, {
      logger,
      metrics: this.metrics,
      requests: this.requests,
      isClosing,
      ...(deps.journal ? { journal: this.journalOf(deps.journal) } : {}),
    });
    this.servers = createHttpServers(config, onRequest, logger);
    const listenerOptions = {
      h1: this.servers.h1,
      h2: this.servers.h2,
      tls: deps.tls,
      handshakeTimeoutMs: config.headersTimeoutMs,
      logger,
    };
    this.listener = new ProtocolListener(listenerOptions);
    this.shellListener = config.shellListen ? new ProtocolListener(listenerOptions) : undefined;
    this.metricsServer = config.metricsListen ? buildMetricsServer(this.metrics, isClosing) : undefined;
  }

  /** Requests on the shell endpoint's port (and address, when both ports are the same) are `shell`. */
  private journalOf(write: (draft: JournalDraft) => void): BridgeJournal {
    return {
      cell: this.config.cell ?? null,
      write,
      listenerOf: (address, port) => {
        const shell = this.shellBound;
        if (!shell || port !== shell.port) return 'main';
        if (this.mainBound?.port !== shell.port) return 'shell';
        return address === shell.address ? 'shell' : 'main';
      },
    };
  }

  private routes(deps: BridgeDeps, isClosing: () => boolean): readonly Route[] {
    const ctx: TunnelContext = {
      config: this.config,
      metrics: this.metrics,
      limiter: new TunnelLimiter(this.config.maxTunnels, this.config.maxTunnelsPerUser),
      gitaly: this.gitaly,
      shellKey: jwtKey(deps.shellSecret),
      workhorseKey: jwtKey(deps.workhorseSecret),
      agents: this.agents,
      tunnels: this.tunnels,
      isClosing,
    };
    return routeTable(
      {
        tunnel: (service) => tunnelHandler(service, ctx),
        health: healthHandler(isClosing),
        proxy: proxyHandler({ railsUrl: this.config.railsUrl, agents: this.agents, metrics: this.metrics }),
        gitHttp: {
          infoRefs: infoRefsHandler(ctx),
          uploadPack: uploadPackHandler(ctx),
          receivePack: receivePackHandler(ctx),
          lfsUpload: lfsUploadHandler(ctx),
        },
      },
      this.config,
    );
  }

  get inFlight(): number {
    return this.requests.inFlight;
  }

  async listen(): Promise<BridgeAddresses> {
    const { listen, metricsListen, shellListen } = this.config;
    const addr = await this.listener.listen(listen.host, listen.port);
    this.mainBound = addr;
    let shellUrl: string | undefined;
    if (this.shellListener && shellListen) {
      this.shellBound = await this.shellListener.listen(shellListen.host, shellListen.port);
      shellUrl = httpUrl(this.shellBound);
    }
    let metricsUrl: string | undefined;
    if (this.metricsServer && metricsListen) {
      const m = await listenOn(this.metricsServer, metricsListen.host, metricsListen.port);
      metricsUrl = httpUrl(m);
    }
    return { url: httpUrl(addr), port: addr.port, metricsUrl, shellUrl };
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.listener.stopAccepting();
    this.shellListener?.stopAccepting();
    this.servers.closeSessions();
    this.servers.h1.closeIdleConnections();
    await this.requests.waitIdle(this.config.shutdownGraceMs);
    this.tunnels.abortAll(ShuttingDown('The server is shutting down; the git operation was interrupted.'));
    await this.requests.waitIdle(1000);
    this.listener.destroyAll();
    this.shellListener?.destroyAll();
    this.servers.h1.close();
    this.gitaly.close();
    this.agents.http.destroy();
    this.agents.https.destroy();
    if (this.metricsServer) await closeServer(this.metricsServer);
  }
}
