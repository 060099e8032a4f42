/**
 * Gitaly addresses as Rails hands them out (`GitalyServer.address`), turned into what grpc-js
 * dials. Gitaly's clients accept `tcp://host:port`, `tls://host:port` and `unix:/path`
 * (`unix:///path` too); the TLS handshake is ours (inside the backchannel credentials), so grpc-js
 * itself always sees a plain target.
 */
export interface GitalyTarget {
  /** The address as given, for logs and cache keys. */
  address: string;
  /** grpc-js target: `host:port` or `unix:/path`. */
  target: string;
  tls: boolean;
  /** TLS server name (SNI and certificate check); the host of a `tls://` address. */
  servername?: string;
}

export class GitalyAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitalyAddressError';
  }
}

const FORMS = 'tcp://host:port, tls://host:port or unix:/path';

export function parseGitalyAddress(address: string): GitalyTarget {
  const bad = (why: string) =>
    new GitalyAddressError(`Gitaly address ${JSON.stringify(address)} ${why} (expected ${FORMS})`);
  if (address.startsWith('unix:')) {
    const path = address.slice('unix:'.length).replace(/^\/\/(?=\/)/, '');
    if (!path.startsWith('/')) throw bad('must name an absolute socket path');
    return { address, target: `unix:${path}`, tls: false };
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw bad('is not a URL');
  }
  if (url.protocol !== 'tcp:' && url.protocol !== 'tls:') {
    throw bad(`uses scheme "${url.protocol.replace(/:$/, '')}"`);
  }
  if (!url.hostname || !url.port || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    throw bad('must be host:port');
  }
  const target = `${url.hostname}:${url.port}`;
  if (url.protocol === 'tcp:') return { address, target, tls: false };
  return { address, target, tls: true, servername: url.hostname.replace(/^\[|\]$/g, '') };
}
