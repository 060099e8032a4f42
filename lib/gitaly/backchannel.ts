import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { readExactly } from '../read-exactly.js';
import {
  BACKCHANNEL_MAGIC,
  decodeSidechannelId,
  MAGIC_LENGTH,
  SIDECHANNEL_HANDSHAKE_TIMEOUT_MS,
  SIDECHANNEL_MAGIC,
  SIDECHANNEL_OK,
} from '../sidechannel.js';
import { YamuxSession, type YamuxStream, YOUNG_GC_PACE_BYTES } from '../yamux/index.js';
import type { GitalyTarget } from './address.js';
import type { SidechannelRegistry } from './registry.js';

type CreateSecureConnector = grpc.ChannelCredentials['_createSecureConnector'];
type SecureConnector = ReturnType<CreateSecureConnector>;

export interface BackchannelOptions {
  target: GitalyTarget;
  registry: SidechannelRegistry;
  /** yamux receive window per stream (Gitaly's clients use the 256 KiB default). */
  yamuxWindow: number;
  /** Extra trusted certificates for `tls://` (PEM), on top of the system roots. */
  ca?: Buffer | string;
  /** Told about every inbound stream that could not be used (unknown id, handshake timeout…). */
  onRefusedStream?: (reason: string) => void;
  /** Told about every session that ends (reconnects follow through grpc-js). */
  onSessionClose?: (err: Error | undefined) => void;
}

/**
 * grpc-js credentials that dial Gitaly's backchannel, as Gitaly's Go clients do in their transport
 * handshake: (TLS) → write `backchannel` → yamux client session → the channel's HTTP/2 runs on the
 * first stream. Streams Gitaly opens back are sidechannels (handed to the registry) or, from
 * Gitaly < 17.11, an HTTP/2 client on the eager backchannel (served by an empty gRPC server).
 *
 * `_createSecureConnector` is grpc-js's internal transport hook (1.14.x); the version is pinned
 * and `backchannel.contract.test.ts` fails loudly if it changes shape.
 */
export class BackchannelCredentials extends grpc.ChannelCredentials {
  constructor(private readonly opts: BackchannelOptions) {
    super();
  }

  _isSecure(): boolean {
    return this.opts.target.tls;
  }

  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(...[, , callCredentials]: Parameters<CreateSecureConnector>): SecureConnector {
    const credentials = callCredentials ?? grpc.CallCredentials.createEmpty();
    return {
      connect: (socket: Socket) => this.handshake(socket),
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => credentials,
      destroy: () => {},
    };
  }

  private async handshake(raw: Socket): Promise<{ socket: Socket; secure: boolean }> {
    const conn = this.opts.target.tls ? await startTls(raw, this.opts) : raw;
    conn.write(BACKCHANNEL_MAGIC);
    const session = new YamuxSession(conn, {
      role: 'client',
      maxStreamWindow: this.opts.yamuxWindow,
      keepAliveIntervalMs: 0,
      // Gitaly's clients: do not hold a stream for minutes when the other end hangs up.
      streamCloseTimeoutMs: 1000,
      // Pack data arrives here: keep V8 from mark-compacting for it (see lib/yamux/young-gc.ts).
      youngGcEveryBytes: YOUNG_GC_PACE_BYTES,
    });
    session.on('stream', (stream: YamuxStream) => void this.inbound(stream));
    session.on('close', (err?: Error) => this.opts.onSessionClose?.(err));
    const stream = session.open();
    // grpc-js owns the channel's stream; once it lets go, the session has no purpose.
    stream.once('close', () => session.close());
    return { socket: stream as unknown as Socket, secure: this.opts.target.tls };
  }

  /** Every stream Gitaly opens is answered: a sidechannel, or HTTP/2 on the old eager backchannel. */
  private async inbound(stream: YamuxStream): Promise<void> {
    stream.on('error', () => {});
    const handshake = { timeoutMs: SIDECHANNEL_HANDSHAKE_TIMEOUT_MS };
    const magic = await readExactly(stream, MAGIC_LENGTH, handshake);
    if (!magic.ok) return this.refuse(stream, 'inbound stream ended before its magic');
    if (!magic.bytes.equals(SIDECHANNEL_MAGIC)) {
      stream.unshift(magic.bytes);
      emptyServerInjector().injectConnection(stream);
      return;
    }
    const idBytes = await readExactly(stream, 8, handshake);
    if (!idBytes.ok) return this.refuse(stream, 'sidechannel ended before its id');
    const id = decodeSidechannelId(idBytes.bytes);
    if (!this.opts.registry.has(id))
      return this.refuse(stream, `sidechannel registry: ID ${id} not registered`);
    stream.write(SIDECHANNEL_OK);
    if (!this.opts.registry.deliver(id, stream)) this.refuse(stream, `sidechannel ${id} arrived too late`);
  }

  private refuse(stream: Duplex, reason: string): void {
    this.opts.onRefusedStream?.(reason);
    stream.destroy();
  }
}

function startTls(socket: Socket, opts: BackchannelOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const ca = opts.ca === undefined ? undefined : [...tls.rootCertificates, opts.ca.toString()];
    const host = opts.target.servername;
    const conn = tls.connect({
      socket,
      // SNI takes host names only; an IP address is still checked against the certificate.
      ...(host && isIP(host) === 0 ? { servername: host } : {}),
      ...(host && isIP(host) !== 0
        ? { checkServerIdentity: (_: string, cert) => tls.checkServerIdentity(host, cert) }
        : {}),
      ALPNProtocols: ['h2'],
      minVersion: 'TLSv1.2',
      ...(ca ? { ca } : {}),
    });
    conn.once('secureConnect', () => {
      conn.off('error', reject);
      resolve(conn);
    });
    conn.once('error', reject);
  });
}

let emptyInjector: grpc.ConnectionInjector | undefined;

/** A gRPC server with no services (every RPC UNIMPLEMENTED), for the old eager backchannel stream. */
function emptyServerInjector(): grpc.ConnectionInjector {
  emptyInjector ??= new grpc.Server().createConnectionInjector(grpc.ServerCredentials.createInsecure());
  return emptyInjector;
}
