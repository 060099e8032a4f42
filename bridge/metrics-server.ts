import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TEXT_PLAIN } from './headers.js';
import { healthBody, JSON_TYPE } from './health.js';
import type { BridgeMetrics } from './metrics.js';

/**
 * The operations listener: `/metrics` (Prometheus text), `/readiness` (503 once shutdown has
 * begun, so load balancers stop sending), `/liveness` (200 while the process runs).
 */
export function buildMetricsServer(metrics: BridgeMetrics, isClosing: () => boolean): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, headers: http.OutgoingHttpHeaders, body: string) => {
      res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { allow: 'GET, HEAD' }, '');
    if (path === '/readiness') {
      const { status, body } = healthBody(isClosing());
      return send(status, JSON_TYPE, body);
    }
    if (path === '/liveness') return send(200, JSON_TYPE, healthBody(false).body);
    if (path !== '/metrics') return send(404, TEXT_PLAIN, 'Not Found\n');
    metrics.registry.metrics().then(
      (text) => send(200, { 'content-type': metrics.registry.contentType }, text),
      (err: unknown) => send(500, TEXT_PLAIN, `${String(err)}\n`),
    );
  });
}

/** Listens on `host:port`; resolves with the bound address. */
export function listenOn(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Stops listening and drops its (keep-alive) connections: scrapes are short. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
