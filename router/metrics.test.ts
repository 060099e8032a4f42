import { describe, expect, it } from 'vitest';
import { createMetrics, createMetricsRegistry } from './metrics.js';

describe('metrics registry', () => {
  it('exposes the plain counters as Prometheus counters at scrape time', async () => {
    const metrics = createMetrics();
    const registry = createMetricsRegistry(metrics);
    metrics.learns = 3;
    metrics.routeCacheHits = 7;
    expect(await registry.metrics()).toContain('gitlab_cells_router_learn_requests_total 3');
    metrics.learns = 4;
    const text = await registry.metrics();
    expect(text).toContain('gitlab_cells_router_learn_requests_total 4');
    expect(text).toContain('gitlab_cells_router_route_cache_hits_total 7');
    expect(text).toContain('# TYPE gitlab_cells_router_fallbacks_total counter');
  });
});

describe('ssh sessions counter', () => {
  it('exposes every outcome, zero included, as gitlab_cells_router_ssh_sessions_total{outcome}', async () => {
    const metrics = createMetrics();
    const registry = createMetricsRegistry(metrics);
    metrics.sshSessions.ok = 2;
    metrics.sshSessions.system = 1;
    const text = await registry.metrics();
    expect(text).toContain('# TYPE gitlab_cells_router_ssh_sessions_total counter');
    expect(text).toContain('gitlab_cells_router_ssh_sessions_total{outcome="ok"} 2');
    expect(text).toContain('gitlab_cells_router_ssh_sessions_total{outcome="policy"} 0');
    expect(text).toContain('gitlab_cells_router_ssh_sessions_total{outcome="client-gone"} 0');
    expect(text).toContain('gitlab_cells_router_ssh_sessions_total{outcome="system"} 1');
  });
});
