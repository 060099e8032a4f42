/**
 * gitlab-shell's `buildCellURL` (`../shared/docs/topology-service.md` §2.4): the cell URL from a
 * Topology Service `proxy.address` and the configured `cell_endpoint` scheme and port.
 */
export interface CellEndpoint {
  scheme: 'http' | 'https';
  port: number;
}

/**
 * `<scheme>://<host>:<port>` from `proxy.address` (`host` or `host:port`, the port dropped);
 * undefined for an address gitlab-shell rejects: one with `/`, an empty host, a host still holding `:`.
 */
export function buildCellUrl(address: string, endpoint: CellEndpoint): string | undefined {
  if (address.includes('/')) return undefined;
  const m = /^([^:]*):(\d+)$/.exec(address);
  const host = m ? (m[1] as string) : address;
  if (host === '' || host.includes(':')) return undefined;
  return `${endpoint.scheme}://${host}:${endpoint.port}`;
}
