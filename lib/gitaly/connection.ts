import * as grpc from '@grpc/grpc-js';
import { loadSshService } from '../proto.js';
import { type GitalyTarget, parseGitalyAddress } from './address.js';
import { BackchannelCredentials } from './backchannel.js';
import { SidechannelRegistry } from './registry.js';
import { SidechannelSshCall, type UnaryMethod } from './sidechannel-call.js';
import { type GitalySshCall, type SshRequest, StreamSshCall } from './ssh-call.js';

/** The three git commands Gitaly's SSHService serves. */
export type GitService = 'upload-pack' | 'receive-pack' | 'upload-archive';

/**
 * How upload-pack reaches Gitaly: `sidechannel` (`SSHUploadPackWithSidechannel`, every Gitaly since
 * 14.x and the only one since 17.8) or `stream` (the bidi `SSHUploadPack`, removed in 17.8).
 */
export type UploadPackMode = 'sidechannel' | 'stream';

export interface GitalyConnectionOptions {
  uploadPack: UploadPackMode;
  /** gRPC keepalive ping interval (Gitaly refuses pings more often than every 10 s). */
  keepaliveMs: number;
  userAgent: string;
  /** HTTP/2 receive window of the gRPC channel (stream and connection). */
  flowControlWindow: number;
  /** yamux receive window per stream of the backchannel session (sidechannels included). */
  yamuxWindow: number;
  /** Extra trusted CA certificates (PEM) for `tls://` addresses. */
  ca?: Buffer | string;
  onRefusedStream?: (address: string, reason: string) => void;
}

const MAX_RECEIVE_MESSAGE_BYTES = 16 * 1024 * 1024;
const BIDI_RPC: Record<GitService, string> = {
  'upload-pack': 'SSHUploadPack',
  'receive-pack': 'SSHReceivePack',
  'upload-archive': 'SSHUploadArchive',
};

/** One channel to one Gitaly over its backchannel: every RPC of every tunnel shares it. */
export class GitalyConnection {
  readonly client: grpc.Client;
  private readonly service = loadSshService();

  constructor(
    readonly target: GitalyTarget,
    readonly registry: SidechannelRegistry,
    private readonly opts: GitalyConnectionOptions,
  ) {
    const credentials = new BackchannelCredentials({
      target,
      registry,
      yamuxWindow: opts.yamuxWindow,
      ...(opts.ca === undefined ? {} : { ca: opts.ca }),
      onRefusedStream: (reason) => opts.onRefusedStream?.(target.address, reason),
    });
    this.client = new grpc.Client(target.target, credentials, {
      'grpc.keepalive_time_ms': opts.keepaliveMs,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
      'grpc-node.flow_control_window': opts.flowControlWindow,
      'grpc.primary_user_agent': opts.userAgent,
    });
  }

  /** Starts `service` with its first request (repository, config, protocol…); stdin follows. */
  open(service: GitService, request: SshRequest, metadata: grpc.Metadata): GitalySshCall {
    if (service === 'upload-pack' && this.opts.uploadPack === 'sidechannel') {
      return new SidechannelSshCall(
        this.client,
        this.method('SSHUploadPackWithSidechannel'),
        this.registry,
        request,
        metadata,
      );
    }
    const def = this.method(BIDI_RPC[service]);
    const call = this.client.makeBidiStreamRequest(
      def.path,
      def.requestSerialize as (v: SshRequest) => Buffer,
      def.responseDeserialize as (b: Buffer) => never,
      metadata,
    );
    return new StreamSshCall(call, request);
  }

  close(): void {
    this.client.close();
  }

  private method(name: string): UnaryMethod {
    const def = this.service.service[name];
    if (!def) throw new Error(`gitaly.SSHService has no method ${name}`);
    return def as unknown as UnaryMethod;
  }
}

/**
 * The connection cache: one `GitalyConnection` per (address, token), created on first use and
 * kept for the life of the process (grpc-js reconnects it when it dies). One sidechannel registry
 * serves them all, as in Gitaly's clients.
 */
export class GitalyConnections {
  private readonly connections = new Map<string, GitalyConnection>();
  private readonly registry = new SidechannelRegistry();

  constructor(private readonly opts: GitalyConnectionOptions) {}

  /** Throws `GitalyAddressError` for an address Gitaly clients would not dial. */
  get(address: string, token: string): GitalyConnection {
    const key = `${address}\u0000${token}`;
    let connection = this.connections.get(key);
    if (!connection) {
      connection = new GitalyConnection(parseGitalyAddress(address), this.registry, this.opts);
      this.connections.set(key, connection);
    }
    return connection;
  }

  get size(): number {
    return this.connections.size;
  }

  /** Sidechannel calls waiting for their stream (for tests and metrics). */
  get waitingSidechannels(): number {
    return this.registry.size;
  }

  close(): void {
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
  }
}
