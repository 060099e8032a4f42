import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtKey } from '../lib/jwt.js';
import type { Logger } from '../lib/logger.js';
import { readSecretFile } from '../lib/secrets.js';
import { CellDirectory } from './cells/directory.js';
import { InternalApi } from './cells/internal-api.js';
import type { TlsOptions } from './cells/transport.js';
import { hostKeyFilesOf, type Listen, type RouterConfig } from './config.js';
import { PrimaryClients } from './geo/forward.js';
import { SiteLearner } from './geo/site-learner.js';
import { createHttpFront } from './http/front.js';
import { loadRouterRuleset } from './http/ruleset.js';
import { createMetrics, createMetricsRegistry, type RouterMetrics } from './metrics.js';
import { Classifier } from './routing/classifier.js';
import { loadTrustedCas } from './ssh/cert-auth.js';
import { loadHostKeys } from './ssh/host-key.js';
import { SshFront, type SshFrontOptions } from './ssh/server.js';
import { StartupGate } from './ssh/startups.js';
import { keyCellResolver, TopologyLearner } from './topology/learner.js';
import { TopologyResolver } from './topology/resolver.js';
import { RestClassifier } from './topology/rest-classify.js';

/**
 * Builds the router (SSH front, HTTP front, optional metrics endpoint) without listening.
 * `listen()` binds everything and returns the addresses; `close()` shuts down gracefully.
 */
export interface RouterDeps {
  log: Logger;
  /** TLS settings for `https://` cells (extra CA for tests or private PKI). */
  tls?: TlsOptions;
}

export interface RouterAddresses {
  ssh: AddressInfo;
  http: AddressInfo;
  metrics: AddressInfo | undefined;
}

export interface Router {
  metrics: RouterMetrics;
  listen(): Promise<RouterAddresses>;
  close(): Promise<void>;
}

export async function buildRouter(config: Readonly<RouterConfig>, deps: RouterDeps): Promise<Router> {
  const log = deps.log;
  const key = jwtKey(readSecretFile(config.shellSecretFile, 'shell secret'));
  const hostKeys = await loadHostKeys(hostKeyFilesOf(config));
  for (const file of hostKeys.created) log.info({ file }, 'generated a new SSH host key');

  const metrics = createMetrics();
  const cells = new CellDirectory(config.cells, config.region, deps.tls, Math.random, config.cellProtocol);
  const rules = await loadRules(config, cells, log);
  const routing = buildRouting(config, cells, key, metrics, log);
  const primaries = new PrimaryClients();
  const ssh = new SshFront(
    sshFrontOptions(config, hostKeys.keys),
    {
      api: routing.api,
      classifier: routing.classifier,
      cells,
      jwtKey: key,
      metrics,
      primaries,
      tunnelProfile: config.tunnelProfile,
      shellJwtTtlSeconds: config.shellJwtTtlSeconds,
      account: { patAllowedScopes: config.patAllowedScopes },
    },
    log.child({ component: 'ssh' }),
  );
  const httpFront = createHttpFront({
    routes: routing.classifier,
    cells,
    ruleset: rules.ruleset,
    metrics,
    log: log.child({ component: 'http' }),
    notFoundDelayMs: config.notFoundDelayMs,
    topology: routing.rest,
  });
  const release = async () => {
    routing.topology?.close();
    await Promise.all([cells.close(), primaries.close()]);
  };
  return serveRouter(config, metrics, { ssh, httpFront, release });
}

/** The SSH front's settings (gitlab-sshd's) from the router's config. */
function sshFrontOptions(
  config: Readonly<RouterConfig>,
  hostKeys: SshFrontOptions['hostKeys'],
): SshFrontOptions {
  return {
    hostKeys,
    loginGraceMs: config.loginGraceMs,
    keepaliveIntervalMs: config.keepaliveIntervalMs,
    keepaliveCountMax: config.keepaliveCountMax,
    maxSessions: config.maxSessions,
    trustedCas: loadTrustedCas(config.trustedUserCaKeys),
    gate: new StartupGate(config.maxStartups, config.perSourceMaxStartups),
    proxy: config.proxyProtocol
      ? {
          policy: config.proxyPolicy,
          allowed: config.proxyAllowed,
          headerTimeoutMs: config.proxyHeaderTimeoutMs,
        }
      : undefined,
  };
}

interface Fronts {
  ssh: SshFront;
  httpFront: http.Server;
  /** Closes what the fronts used (the cells' and primaries' clients, the Topology Service's). */
  release(): Promise<void>;
}

/** `listen()` and a graceful `close()` over the built fronts, with the metrics endpoint and readiness. */
function serveRouter(config: Readonly<RouterConfig>, metrics: RouterMetrics, fronts: Fronts): Router {
  const { ssh, httpFront } = fronts;
  /** gitlab-sshd's readiness: serving once every listener is bound, not once shutdown began. */
  const status = { ready: false };
  const metricsServer = config.metricsListen ? createMetricsServer(metrics, status) : undefined;
  let closing: Promise<void> | undefined;
  const close = async () => {
    status.ready = false;
    const httpClosed = closeHttp(httpFront);
    await ssh.close(config.shutdownGraceMs);
    httpFront.closeAllConnections();
    await httpClosed;
    if (metricsServer) {
      metricsServer.closeAllConnections();
      await closeHttp(metricsServer);
    }
    await fronts.release();
  };
  return {
    metrics,
    async listen() {
      const sshAddress = await ssh.listen(config.sshListen);
      const httpAddress = await listenHttp(httpFront, config.httpListen);
      const metricsAddress =
        metricsServer && config.metricsListen
          ? await listenHttp(metricsServer, config.metricsListen)
          : undefined;
      status.ready = !closing;
      return { ssh: sshAddress, http: httpAddress, metrics: metricsAddress };
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/** The HTTP front's rule file; a bad one stops the build (the cells' connections are closed first). */
async function loadRules(
  config: Readonly<RouterConfig>,
  cells: CellDirectory,
  log: Logger,
): Promise<ReturnType<typeof loadRouterRuleset>> {
  let rules: ReturnType<typeof loadRouterRuleset>;
  try {
    rules = loadRouterRuleset(config.rulesFile, cells);
  } catch (err) {
    await cells.close();
    throw err;
  }
  log.info({ rules: rules.source, count: rules.ruleset.rules.length }, 'HTTP routing rules loaded');
  return rules;
}

/**
 * Who decides the cell: in `learn` mode the cells' learn endpoint behind the internal API; in
 * `topology` mode the Topology Service (key fingerprints, routes, and the HTTP front's classify rules);
 * in `site` mode the one site.
 */
function buildRouting(
  config: Readonly<RouterConfig>,
  cells: CellDirectory,
  key: ReturnType<typeof jwtKey>,
  metrics: RouterMetrics,
  log: Logger,
) {
  const topology = topologyResolver(config, cells, metrics, log);
  const api = new InternalApi(
    cells,
    key,
    config.internalApiTimeoutMs,
    topology ? keyCellResolver(topology) : undefined,
  );
  const learner = topology
    ? new TopologyLearner(topology)
    : config.routing === 'site'
      ? new SiteLearner(cells.legacy)
      : api;
  const classifier = new Classifier(cells, learner, metrics, log.child({ component: 'routing' }), {
    maxEntries: config.learnCacheMaxEntries,
    maxTtlMs: config.learnCacheMaxTtlMs,
  });
  const rest =
    topology && config.topologyServiceUrl
      ? new RestClassifier(config.topologyServiceUrl, topology, metrics, config.topologyTimeoutMs)
      : undefined;
  return { topology, api, classifier, rest };
}

/** `routing: "topology"`: the Topology Service client; undefined in `learn` mode. */
function topologyResolver(
  config: Readonly<RouterConfig>,
  cells: CellDirectory,
  metrics: RouterMetrics,
  log: Logger,
): TopologyResolver | undefined {
  if (config.routing !== 'topology' || !config.topologyServiceAddress || !config.cellEndpointPort)
    return undefined;
  log.info(
    { topology_service: config.topologyServiceAddress, rest: config.topologyServiceUrl },
    'routing through the Topology Service',
  );
  return new TopologyResolver(cells, metrics, log.child({ component: 'topology' }), {
    address: config.topologyServiceAddress,
    cellEndpoint: { scheme: config.cellEndpointScheme, port: config.cellEndpointPort },
    timeoutMs: config.topologyTimeoutMs,
  });
}

/**
 * `GET /metrics`, and gitlab-sshd's probes: readiness `/start` (200 while serving, 503 before and
 * during shutdown) and liveness `/health` (200 while the process answers).
 */
function createMetricsServer(metrics: RouterMetrics, status: { ready: boolean }): http.Server {
  const registry = createMetricsRegistry(metrics);
  return http.createServer((req, res) => {
    if (req.url === '/start') {
      res.writeHead(status.ready ? 200 : 503).end();
      return;
    }
    if (req.url === '/health') {
      res.writeHead(200).end();
      return;
    }
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
}

function listenHttp(server: http.Server, listen: Listen): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function closeHttp(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
  });
}
