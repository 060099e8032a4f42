import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { OUTCOMES, type Outcome } from '../lib/outcome.js';

/** Plain counters the router increments; tests read them directly, Prometheus reads them on scrape. */
export interface RouterMetrics {
  /** Route classifications answered from the cache. */
  routeCacheHits: number;
  /** Route classifications that needed a learn call. */
  routeCacheMisses: number;
  /** Learn calls made (successful or not). */
  learns: number;
  /** `421 Misdirected Request` answers that made the router drop a route and learn again. */
  redirects: number;
  /** Classifications that fell back to the legacy cell because learning failed. */
  fallbacks: number;
  /** git commands a Geo secondary's `300` custom action sent on to the primary. */
  geoForwards: number;
  sshConnections: number;
  sshAuthFailures: number;
  sshGitCommands: number;
  /** Session channels refused by the per-connection limit (gitlab-sshd's counter). */
  sshConcurrentLimitedSessions: number;
  /** Connections dropped by the unauthenticated connections cap (`maxStartups`). */
  sshStartupsDropped: number;
  /** Connections whose client address came from a PROXY header. */
  sshProxyHeaders: number;
  /** Connections closed by the PROXY protocol policy (missing, refused or malformed header). */
  sshProxyRefused: number;
  /** gitlab-sshd's SLI: every session; errors are the `system` outcomes (policy, client-gone excluded). */
  sliSshdSessions: number;
  sliSshdSessionErrors: number;
  /** gitlab-sshd's SLI: connections that tried to authenticate; errors had a server-side failure. */
  sliSshdConnections: number;
  sliSshdConnectionErrors: number;
  /** SSH connections open right now (`gitlab_shell_sshd_in_flight_connections`). */
  sshInFlight: { connections: number };
  /** gitlab-sshd's histograms, with its buckets. */
  sshHistograms: { sessionDuration: Histogram; sessionEstablished: Histogram };
  /**
   * SSH sessions (one command or welcome each) by how they ended (`lib/outcome.ts`); `system` is
   * the error SLI, as gitlab-shell's `trackError` counts it (policy refusals and cancellations left out).
   */
  sshSessions: Record<Outcome, number>;
  httpRequests: number;
  /** HTTP requests sent to the cell a token/session rule named (the path did not decide). */
  httpRuleRouted: number;
  /** HTTP requests answered 400 because a rule matched a token that cannot be decoded. */
  httpRuleRejected: number;
  /** Public HTTP requests for the internal API, answered 404 by the router. */
  httpInternalBlocked: number;
  /** `topology` mode: Classify calls (gRPC) and REST classifies made to the Topology Service. */
  topologyClassifies: number;
  /** `topology` mode: classifies answered NOT_FOUND (the legacy cell serves). */
  topologyNotFound: number;
  /** `topology` mode: classifies that failed after their retries (the legacy cell serves). */
  topologyErrors: number;
}

export function createMetrics(): RouterMetrics {
  return {
    routeCacheHits: 0,
    routeCacheMisses: 0,
    learns: 0,
    redirects: 0,
    fallbacks: 0,
    geoForwards: 0,
    sshConnections: 0,
    sshAuthFailures: 0,
    sshGitCommands: 0,
    sshConcurrentLimitedSessions: 0,
    sshStartupsDropped: 0,
    sshProxyHeaders: 0,
    sshProxyRefused: 0,
    sliSshdSessions: 0,
    sliSshdSessionErrors: 0,
    sliSshdConnections: 0,
    sliSshdConnectionErrors: 0,
    sshInFlight: { connections: 0 },
    sshHistograms: {
      sessionDuration: new Histogram({
        name: 'gitlab_shell_sshd_session_duration_seconds',
        help: 'A histogram of latencies for connections to gitlab-shell sshd.',
        buckets: [5, 30, 60],
        registers: [],
      }),
      sessionEstablished: new Histogram({
        name: 'gitlab_shell_sshd_session_established_duration_seconds',
        help: 'A histogram of latencies until session established to gitlab-shell sshd.',
        buckets: [0.5, 1, 5],
        registers: [],
      }),
    },
    sshSessions: { ok: 0, policy: 0, 'client-gone': 0, system: 0 },
    httpRequests: 0,
    httpRuleRouted: 0,
    httpRuleRejected: 0,
    httpInternalBlocked: 0,
    topologyClassifies: 0,
    topologyNotFound: 0,
    topologyErrors: 0,
  };
}

/** The fields of RouterMetrics that are one plain counter each. */
type PlainCounter = {
  [K in keyof RouterMetrics]: RouterMetrics[K] extends number ? K : never;
}[keyof RouterMetrics];

const DESCRIPTIONS: Record<PlainCounter, [string, string]> = {
  routeCacheHits: [
    'gitlab_cells_router_route_cache_hits_total',
    'Route classifications served from the cache',
  ],
  routeCacheMisses: [
    'gitlab_cells_router_route_cache_misses_total',
    'Route classifications that needed a learn call',
  ],
  learns: ['gitlab_cells_router_learn_requests_total', 'Learn calls made to cells'],
  redirects: ['gitlab_cells_router_redirects_total', '421 Misdirected Request answers received from cells'],
  fallbacks: ['gitlab_cells_router_fallbacks_total', 'Classifications that fell back to the legacy cell'],
  geoForwards: ['gitlab_cells_router_geo_forwards_total', 'git commands forwarded to a Geo primary'],
  sshConnections: ['gitlab_cells_router_ssh_connections_total', 'SSH connections accepted'],
  sshAuthFailures: ['gitlab_cells_router_ssh_auth_failures_total', 'SSH public keys rejected'],
  sshGitCommands: ['gitlab_cells_router_ssh_git_commands_total', 'git commands run over SSH'],
  sshConcurrentLimitedSessions: [
    'gitlab_shell_sshd_concurrent_limited_sessions_total',
    'The number of times the concurrent sessions limit was hit',
  ],
  sshStartupsDropped: [
    'gitlab_cells_router_ssh_startups_dropped_total',
    'SSH connections dropped by the unauthenticated connections cap',
  ],
  sshProxyHeaders: [
    'gitlab_cells_router_ssh_proxy_headers_total',
    'SSH connections addressed by a PROXY header',
  ],
  sshProxyRefused: [
    'gitlab_cells_router_ssh_proxy_refused_total',
    'SSH connections closed by the PROXY protocol policy',
  ],
  sliSshdSessions: [
    'gitlab_sli:shell_sshd_sessions:total',
    'Number of SSH sessions that have been established',
  ],
  sliSshdSessionErrors: [
    'gitlab_sli:shell_sshd_sessions:errors_total',
    'Number of SSH sessions that have failed',
  ],
  sliSshdConnections: [
    'gitlab_sli:shell_sshd_connections:total',
    'Number of SSH connections that reached authentication',
  ],
  sliSshdConnectionErrors: [
    'gitlab_sli:shell_sshd_connections:errors_total',
    'Number of SSH connections that failed due to a server-side error',
  ],
  httpRequests: ['gitlab_cells_router_http_requests_total', 'HTTP requests received by the HTTP front'],
  httpRuleRouted: [
    'gitlab_cells_router_http_rule_routed_total',
    'HTTP requests sent to the cell a token or session rule named',
  ],
  httpRuleRejected: [
    'gitlab_cells_router_http_rule_rejected_total',
    'HTTP requests answered 400 for a malformed routable token',
  ],
  httpInternalBlocked: [
    'gitlab_cells_router_http_internal_blocked_total',
    'Public HTTP requests for /api/v4/internal answered 404',
  ],
  topologyClassifies: [
    'gitlab_cells_router_topology_classifies_total',
    'Classify calls made to the Topology Service (topology mode)',
  ],
  topologyNotFound: [
    'gitlab_cells_router_topology_not_found_total',
    'Topology Service classifies answered NOT_FOUND (legacy cell)',
  ],
  topologyErrors: [
    'gitlab_cells_router_topology_errors_total',
    'Topology Service classifies that failed after retries (legacy cell)',
  ],
};

/** A prom-client registry whose counters mirror `metrics` at scrape time. */
export function createMetricsRegistry(metrics: RouterMetrics): Registry {
  const registry = new Registry();
  for (const key of Object.keys(DESCRIPTIONS) as PlainCounter[]) {
    const [name, help] = DESCRIPTIONS[key];
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(metrics[key]);
      },
    });
  }
  new Gauge({
    name: 'gitlab_shell_sshd_in_flight_connections',
    help: 'A gauge of connections currently being served by gitlab-shell sshd.',
    registers: [registry],
    collect() {
      this.set(metrics.sshInFlight.connections);
    },
  });
  registry.registerMetric(metrics.sshHistograms.sessionDuration);
  registry.registerMetric(metrics.sshHistograms.sessionEstablished);
  new Counter({
    name: 'gitlab_cells_router_ssh_sessions_total',
    help: 'SSH sessions by outcome (ok, policy, client-gone, system); system ones count against the error SLI',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const outcome of OUTCOMES) this.inc({ outcome }, metrics.sshSessions[outcome]);
    },
  });
  return registry;
}
