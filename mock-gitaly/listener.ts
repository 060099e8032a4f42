import { lstatSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import type { Logger } from '../lib/logger.js';
import { BACKCHANNEL_MAGIC, MAGIC_LENGTH } from '../lib/sidechannel.js';
import type { GitalyConfig } from './config.js';

/** grpc-go's server handshake limit (`ConnectionTimeout`): a silent connection is dropped after it. */
const PEEK_TIMEOUT_MS = 120_000;

export interface ConnectionHandlers {
  /** The client wrote `backchannel`: the socket continues right after the magic. */
  backchannel(socket: Duplex): void;
  /** Anything else: the peeked bytes have been put back, the socket is plain HTTP/2. */
  plain(socket: Duplex): void;
}

export interface BoundAddresses {
  port: number;
  tlsPort?: number;
  unixPath?: string;
}

/**
 * Gitaly's listenmux: reads the first 11 bytes (after TLS, on a TLS listener) and hands the socket to
 * the backchannel when they are `backchannel`, else puts them back for plain gRPC. A prefix that
 * already differs decides at once (a plain client's preface is 24 bytes, so nothing waits on it).
 */
export function peekMagic(socket: Duplex, handlers: ConnectionHandlers, logger: Logger): void {
  let got = Buffer.alloc(0);
  const timer = setTimeout(() => {
    logger.info('connection sent no magic or preface in time; closing it');
    socket.destroy();
  }, PEEK_TIMEOUT_MS);
  timer.unref();
  const stop = () => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.pause();
  };
  const onClose = () => clearTimeout(timer);
  const onData = (chunk: Buffer) => {
    got = Buffer.concat([got, chunk]);
    const n = Math.min(got.length, MAGIC_LENGTH);
    const matches = got.subarray(0, n).equals(BACKCHANNEL_MAGIC.subarray(0, n));
    if (matches && got.length < MAGIC_LENGTH) return;
    stop();
    if (matches) {
      if (got.length > MAGIC_LENGTH) socket.unshift(got.subarray(MAGIC_LENGTH));
      handlers.backchannel(socket);
    } else {
      socket.unshift(got);
      handlers.plain(socket);
    }
  };
  socket.on('data', onData);
  socket.on('close', onClose);
}

/** The TCP listener (`listen`), plus the optional TLS (`listenTls`) and unix (`listenUnix`) ones. */
export class Listeners {
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<Duplex>();
  private stopped = false;

  constructor(
    private readonly config: GitalyConfig,
    private readonly logger: Logger,
    private readonly handlers: ConnectionHandlers,
  ) {}

  async start(): Promise<BoundAddresses> {
    const { listen, listenTls, listenUnix } = this.config;
    const onSocket = (socket: Duplex) => this.accept(socket);
    const port = await this.bind(net.createServer(onSocket), listen);
    const bound: BoundAddresses = { port };
    if (listenTls !== undefined) {
      const server = tls.createServer(
        {
          cert: readFileSync(this.config.tlsCertFile as string),
          key: readFileSync(this.config.tlsKeyFile as string),
          ALPNProtocols: ['h2'],
        },
        onSocket,
      );
      server.on('tlsClientError', (err) => this.logger.info({ err: err.message }, 'TLS handshake failed'));
      bound.tlsPort = await this.bind(server, listenTls);
    }
    if (listenUnix !== undefined) {
      removeStaleSocket(listenUnix);
      await this.bind(net.createServer(onSocket), listenUnix);
      bound.unixPath = listenUnix;
    }
    return bound;
  }

  /** Stops accepting; connections already made go on until `destroySockets`. */
  close(): void {
    this.stopped = true;
    for (const server of this.servers) server.close();
    if (this.config.listenUnix !== undefined) rmSync(this.config.listenUnix, { force: true });
  }

  destroySockets(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private accept(socket: Duplex): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    // Go (and so Gitaly) sets TCP_NODELAY on every connection; without it the small yamux frames
    // that carry HTTP/2 WINDOW_UPDATEs wait for delayed ACKs and a push crawls at 1 MiB/s.
    if (socket instanceof net.Socket) socket.setNoDelay(true);
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', (err) => this.logger.debug({ err: err.message }, 'client connection error'));
    peekMagic(socket, this.handlers, this.logger);
  }

  private bind(server: net.Server, where: { host: string; port: number } | string): Promise<number> {
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      const ready = () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      };
      if (typeof where === 'string') server.listen(where, ready);
      else server.listen(where.port, where.host, ready);
    });
  }
}

/** A socket file left by a previous run would make `listen` fail with EADDRINUSE. */
function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) rmSync(path);
  } catch {
    // Nothing there.
  }
}
