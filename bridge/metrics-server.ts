import Fastify, { type FastifyInstance } from 'fastify';
import type { BridgeMetrics } from './metrics.js';

/**
 * The operations listener: `/metrics` (Prometheus text), `/readiness` (503 once shutdown has
 * begun, so load balancers stop sending), `/liveness` (200 while the process runs).
 */
export function buildMetricsServer(metrics: BridgeMetrics, isClosing: () => boolean): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  app.get('/readiness', async (_request, reply) => {
    if (isClosing()) return reply.code(503).send({ status: 'shutting-down' });
    return { status: 'ok' };
  });
  app.get('/liveness', async () => ({ status: 'ok' }));
  return app;
}
