import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Outcome } from '../lib/outcome.js';

/** The outcome of an answer whose status says it all: 5xx `system`, 4xx `policy`, else `ok`. */
export function outcomeOfStatus(status: number): Outcome {
  if (status >= 500) return 'system';
  return status >= 400 ? 'policy' : 'ok';
}

const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** The bridge's Prometheus metrics, on a registry of its own (never the global one). */
export class BridgeMetrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'bridge_requests_total',
    help: 'Requests by route id, backend id and outcome (ok, policy, client-gone, system), every route.',
    labelNames: ['route', 'backend', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly requestDuration = new Histogram({
    name: 'bridge_request_duration_seconds',
    help: 'Request duration from request to end of response, by route id, backend id and outcome.',
    labelNames: ['route', 'backend', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly tunnelsInFlight = new Gauge({
    name: 'bridge_tunnels_in_flight',
    help: 'Tunnels currently streaming (after pre-authorization), by route.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly tunnels = new Counter({
    name: 'bridge_tunnels_total',
    help: 'Tunnel requests by route and outcome (the gitaly rows of bridge_requests_total).',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly bytes = new Counter({
    name: 'bridge_tunnel_bytes_total',
    help: 'Tunnel bytes by route and direction (in = request body from the client, out = response to the client).',
    labelNames: ['route', 'direction'] as const,
    registers: [this.registry],
  });

  readonly duration = new Histogram({
    name: 'bridge_tunnel_duration_seconds',
    help: 'Tunnel duration from request to end of response, by route and outcome (the gitaly rows).',
    labelNames: ['route', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly preauthDuration = new Histogram({
    name: 'bridge_preauth_duration_seconds',
    help: 'Pre-authorization round trip to Rails, by HTTP status (or "error").',
    labelNames: ['status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly gitalyErrors = new Counter({
    name: 'bridge_gitaly_errors_total',
    help: 'Gitaly calls that ended with a non-OK gRPC status, by route and code.',
    labelNames: ['route', 'code'] as const,
    registers: [this.registry],
  });

  readonly proxied = new Counter({
    name: 'bridge_proxy_requests_total',
    help: 'Requests reverse-proxied to Rails, by status class (2xx..5xx, or "error").',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  /** One finished request of any route; tunnels (backend `gitaly`) also count under their own names. */
  observeRequest(route: string, backend: string, outcome: Outcome, seconds: number): void {
    this.requests.inc({ route, backend, outcome });
    this.requestDuration.observe({ route, backend, outcome }, seconds);
    if (backend === 'gitaly') {
      this.tunnels.inc({ route, outcome });
      this.duration.observe({ route, outcome }, seconds);
    }
  }
}

/**
 * A byte counter fed per write: the increments reach prom-client in steps of `step` bytes, and the
 * rest at `flush()` (the end of the tunnel), because one labelled `inc` costs more than the write of a
 * 16 KiB piece it would count.
 */
export class SteppedCount {
  private pending = 0;

  constructor(
    private readonly counter: { inc(n: number): void },
    private readonly step = 1024 * 1024,
  ) {}

  add(n: number): void {
    this.pending += n;
    if (this.pending >= this.step) this.flush();
  }

  flush(): void {
    if (this.pending === 0) return;
    this.counter.inc(this.pending);
    this.pending = 0;
  }
}
