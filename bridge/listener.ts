import type http from 'node:http';
import type http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../lib/logger.js';

/** The client connection preface of HTTP/2 with prior knowledge (RFC 9113 §3.4). */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** First byte of a TLS record carrying a handshake. */
const TLS_HANDSHAKE = 0x16;

export type WireProtocol = 'h1' | 'h2c' | 'tls' | 'pending';

/**
 * Classifies the first bytes of a connection: the HTTP/2 preface (h2c), a TLS handshake, or
 * anything else (HTTP/1.1). `pending` while the bytes seen so far are a strict prefix of the preface.
 */
export function sniff(head: Buffer, tlsEnabled: boolean): WireProtocol {
  if (head.length === 0) return 'pending';
  if (tlsEnabled && head[0] === TLS_HANDSHAKE) return 'tls';
  const n = Math.min(head.length, H2_PREFACE.length);
  if (!head.subarray(0, n).equals(H2_PREFACE.subarray(0, n))) return 'h1';
  return n === H2_PREFACE.length ? 'h2c' : 'pending';
}

export interface ListenerOptions {
  h1: http.Server;
  h2: http2.Http2Server;
  /** With a certificate, TLS connections are accepted too (ALPN h2 → HTTP/2, otherwise HTTP/1.1). */
  tls: { cert: Buffer | string; key: Buffer | string } | undefined;
  /** A connection that has not shown its protocol (or finished its TLS handshake) by then is dropped. */
  handshakeTimeoutMs: number;
  logger: Logger;
}

/**
 * One TCP port for every protocol: peeks at the first bytes of each connection and hands the
 * socket (with the peeked bytes put back) to the HTTP/1.1 or HTTP/2 server.
 */
export class ProtocolListener {
  private readonly server: net.Server;
  /** Terminates TLS for sockets handed to it; never listens itself. */
  private readonly tlsServer: tls.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly opts: ListenerOptions) {
    this.server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
    if (opts.tls) {
      this.tlsServer = tls.createServer({
        cert: opts.tls.cert,
        key: opts.tls.key,
        ALPNProtocols: ['h2', 'http/1.1'],
        handshakeTimeout: opts.handshakeTimeoutMs,
      });
      this.tlsServer.on('secureConnection', (secure) => this.handOff(secure, secure.alpnProtocol === 'h2'));
      this.tlsServer.on('tlsClientError', (err, secure) => {
        opts.logger.debug({ err }, 'TLS handshake failed');
        secure.destroy();
      });
    }
  }

  listen(host: string, port: number): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.removeListener('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** Stops accepting at once; existing connections stay until they end or `destroyAll()`. */
  stopAccepting(): void {
    if (this.server.listening) this.server.close();
  }

  get connections(): number {
    return this.sockets.size;
  }

  destroyAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', (err) => this.opts.logger.debug({ err }, 'connection error'));
    const timer = setTimeout(() => socket.destroy(), this.opts.handshakeTimeoutMs);
    timer.unref();
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const protocol = sniff(head, this.tlsServer !== undefined);
      if (protocol === 'pending') return;
      socket.removeListener('data', onData);
      socket.pause();
      socket.unshift(head);
      clearTimeout(timer);
      if (protocol === 'tls') this.tlsServer?.emit('connection', socket);
      else this.handOff(socket, protocol === 'h2c');
    };
    socket.on('data', onData);
  }

  private handOff(socket: net.Socket, h2: boolean): void {
    if (h2) {
      // The HTTP/2 session reads the bytes already buffered on the socket itself.
      this.opts.h2.emit('connection', socket);
    } else {
      this.opts.h1.emit('connection', socket);
      socket.resume();
    }
  }
}
