/**
 * @file The SSH front's TCP side, before ssh2 sees a byte: the startups cap (`startups.ts`), the
 * login grace timer from the TCP accept, and the PROXY protocol (v1/v2, `lib/proxy-protocol.ts`)
 * with gitlab-sshd's policies. Each admitted socket is handed on with the client's address: the
 * header's source when one is used, else the TCP peer.
 *
 * Policies (gitlab-sshd `proxy_policy`): `use` a header if one comes, `require` one (none →
 * closed), `reject` any (a header → closed), `ignore` it (read and dropped). With an allow-list
 * (`proxy_allowed`), a peer outside it is under `reject`: its header is never trusted.
 */
import net, { type AddressInfo, BlockList, type Socket } from 'node:net';
import type { Logger } from '../../lib/logger.js';
import { type ProxyHeader, readProxyHeader } from '../../lib/proxy-protocol.js';
import type { Listen } from '../config.js';
import type { RouterMetrics } from '../metrics.js';
import type { StartupGate } from './startups.js';

export type ProxyPolicy = 'use' | 'require' | 'reject' | 'ignore';

export interface ProxyProtocolOptions {
  policy: ProxyPolicy;
  /** CIDRs whose headers are trusted; empty = every peer. */
  allowed: readonly string[];
  headerTimeoutMs: number;
}

export interface ListenerOptions {
  loginGraceMs: number;
  /** Undefined: PROXY protocol off, the TCP peer is the client. */
  proxy: ProxyProtocolOptions | undefined;
  gate: StartupGate;
}

/** A socket ready for SSH, with the client's address. */
export interface AcceptedSocket {
  socket: Socket;
  clientIp: string;
  clientPort: number;
  /** The TCP peer when a PROXY header named someone else (the load balancer). */
  proxyIp: string | undefined;
  /** Clears the login grace timer and leaves the startups count. */
  authenticated(): void;
}

export class SshListener {
  private readonly server: net.Server;
  private readonly allowList: BlockList | undefined;
  /** Admitted sockets by TCP peer `ip:port`, from accept to close. */
  readonly sockets = new Map<string, AcceptedSocket>();
  closing = false;

  constructor(
    private readonly opts: ListenerOptions,
    private readonly metrics: RouterMetrics,
    private readonly log: Logger,
    private readonly handOver: (accepted: AcceptedSocket) => void,
  ) {
    this.allowList = opts.proxy && opts.proxy.allowed.length > 0 ? cidrList(opts.proxy.allowed) : undefined;
    this.server = net.createServer((socket) => this.onSocket(socket));
  }

  listen(listen: Listen): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(listen.port, listen.host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** Stops accepting; resolves once the listener is closed (every socket gone). */
  close(): Promise<void> {
    this.closing = true;
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  destroyAll(): void {
    for (const a of this.sockets.values()) a.socket.destroy();
  }

  private onSocket(socket: Socket): void {
    if (this.closing || socket.remoteAddress === undefined) {
      // No address: the peer reset the connection while it waited to be accepted (a client or a
      // balancer's health check that gave up on a busy router), nothing to refuse or count.
      if (!this.closing) this.log.debug('connection closed by the peer before it was accepted');
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    const rawIp = socket.remoteAddress;
    const peerIp = unmapped(rawIp);
    const peerPort = socket.remotePort ?? 0;
    socket.on('error', (err) => this.log.debug({ err, remote_ip: peerIp }, 'ssh socket error'));
    const verdict = this.opts.gate.admit(peerIp);
    if (!verdict.admitted) {
      this.metrics.sshStartupsDropped++;
      this.log.info(
        { remote_ip: peerIp, reason: verdict.reason },
        'too many unauthenticated connections, dropped',
      );
      socket.destroy();
      return;
    }
    const grace = setTimeout(() => {
      this.log.info(
        { remote_ip: peerIp, login_grace_ms: this.opts.loginGraceMs },
        'login grace time exceeded, disconnecting',
      );
      socket.destroy();
    }, this.opts.loginGraceMs);
    const key = `${rawIp}:${peerPort}`;
    this.metrics.sshInFlight.connections++;
    socket.once('close', () => {
      this.metrics.sshInFlight.connections--;
      clearTimeout(grace);
      verdict.release();
      this.sockets.delete(key);
    });
    const accepted = (clientIp: string, clientPort: number, proxyIp: string | undefined) => {
      if (socket.destroyed) return;
      const entry: AcceptedSocket = {
        socket,
        clientIp,
        clientPort,
        proxyIp,
        authenticated: () => {
          clearTimeout(grace);
          verdict.release();
        },
      };
      this.sockets.set(key, entry);
      this.handOver(entry);
    };
    if (this.opts.proxy) this.readProxy(socket, peerIp, this.opts.proxy, accepted);
    else accepted(peerIp, peerPort, undefined);
  }

  /** The PROXY header under the peer's policy: the client's address, or the connection refused. */
  private readProxy(
    socket: Socket,
    peerIp: string,
    proxy: ProxyProtocolOptions,
    accepted: (clientIp: string, clientPort: number, proxyIp: string | undefined) => void,
  ): void {
    const trusted = !this.allowList || this.allowList.check(peerIp, net.isIPv6(peerIp) ? 'ipv6' : 'ipv4');
    const policy = trusted ? proxy.policy : 'reject';
    readProxyHeader(socket, proxy.headerTimeoutMs).then(
      (header) => {
        const refusal = refuse(policy, header);
        if (refusal) return this.refused(socket, peerIp, refusal);
        const source = policy === 'ignore' ? undefined : header?.source;
        if (!source) return accepted(peerIp, socket.remotePort ?? 0, undefined);
        this.metrics.sshProxyHeaders++;
        accepted(unmapped(source.address), source.port, peerIp);
      },
      (err: Error) => this.refused(socket, peerIp, err.message),
    );
  }

  private refused(socket: Socket, peerIp: string, reason: string): void {
    this.metrics.sshProxyRefused++;
    this.log.info({ remote_ip: peerIp, reason }, 'PROXY protocol: connection refused');
    socket.destroy();
  }
}

function refuse(policy: ProxyPolicy, header: ProxyHeader | undefined): string | undefined {
  if (policy === 'require' && !header) return 'PROXY header required, none received';
  if (policy === 'reject' && header) return 'PROXY header from a peer that may not send one';
  return undefined;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`, as the address GitLab sees for an IPv4 client. */
function unmapped(ip: string): string {
  return ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
}

function cidrList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix] = cidr.split('/');
    const type = net.isIPv6(address) ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}
