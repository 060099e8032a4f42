import * as grpc from '@grpc/grpc-js';
import { gitalyAuthHeader } from '../lib/gitaly-auth.js';
import {
  loadSshService,
  type SSHReceivePackRequest,
  type SSHStreamResponse,
  type SSHUploadArchiveRequest,
  type SSHUploadPackRequest,
} from '../lib/proto.js';
import { GitalyAddressInvalid } from './errors.js';
import type { PreauthResponse } from './preauth.js';
import type { TunnelRoute } from './routes.js';

export type SshRequest = SSHUploadPackRequest | SSHReceivePackRequest | SSHUploadArchiveRequest;
export type SshCall = grpc.ClientDuplexStream<SshRequest, SSHStreamResponse>;

/** Gitaly sends stdout/stderr in chunks of at most 128 KiB; stdin goes out in chunks of the same size. */
export const STDIN_CHUNK_BYTES = 128 * 1024;
const MAX_RECEIVE_MESSAGE_BYTES = 16 * 1024 * 1024;
/** `call_metadata` keys forwarded to Gitaly, as Workhorse's `withOutgoingMetadata` allows. */
const FORWARDED_METADATA = /^(gitaly-feature-.+|user_id|username|remote_ip)$/;

/** Rails' `tcp://host:port` → grpc-js target `host:port`; any other scheme is refused. */
export function gitalyTarget(address: string): string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw GitalyAddressInvalid(
      `Gitaly address ${JSON.stringify(address)} is not a URL (expected tcp://host:port)`,
    );
  }
  if (url.protocol !== 'tcp:') {
    throw GitalyAddressInvalid(
      `Gitaly address ${JSON.stringify(address)} uses scheme "${url.protocol.replace(/:$/, '')}"; only tcp://host:port is supported`,
    );
  }
  if (!url.hostname || !url.port || (url.pathname !== '' && url.pathname !== '/') || url.search) {
    throw GitalyAddressInvalid(`Gitaly address ${JSON.stringify(address)} must look like tcp://host:port`);
  }
  return `${url.hostname}:${url.port}`;
}

/** Per-call metadata: a fresh v2 token, the correlation id and the allowed `call_metadata` entries. */
export function callMetadata(
  token: string,
  correlationId: string,
  extra: Readonly<Record<string, string>>,
): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(extra)) {
    if (FORWARDED_METADATA.test(key)) md.set(key, value);
  }
  if (token !== '') md.set('authorization', gitalyAuthHeader(token));
  md.set('x-gitlab-correlation-id', correlationId);
  return md;
}

/** The first message of each RPC (never with stdin). */
export function firstRequest(
  route: TunnelRoute,
  auth: PreauthResponse,
  gitProtocol: string | undefined,
): SshRequest {
  const repository = auth.Repository;
  const protocol = gitProtocol ? { git_protocol: gitProtocol } : {};
  switch (route.id) {
    case 'ssh_upload_pack':
      return { repository, git_config_options: auth.GitConfigOptions, ...protocol };
    case 'ssh_receive_pack':
      return {
        repository,
        gl_id: auth.GL_ID,
        gl_repository: auth.GL_REPOSITORY,
        gl_username: auth.GL_USERNAME,
        git_config_options: auth.GitConfigOptions,
        ...protocol,
      };
    case 'ssh_upload_archive':
      return { repository };
  }
}

/** One grpc-js client (channel) per Gitaly address and token, kept for the life of the bridge. */
export class GitalyClients {
  private readonly clients = new Map<string, grpc.Client>();
  private readonly service = loadSshService();

  constructor(private readonly opts: { keepaliveMs: number; userAgent: string; flowControlWindow: number }) {}

  /** Opens a bidi call; the caller writes the first request, then stdin chunks. */
  open(address: string, token: string, route: TunnelRoute, metadata: grpc.Metadata): SshCall {
    const client = this.client(address, token);
    const def = this.service.service[route.rpc];
    if (!def) throw new Error(`gitaly.SSHService has no method ${route.rpc}`);
    return client.makeBidiStreamRequest(
      def.path,
      def.requestSerialize as (v: SshRequest) => Buffer,
      def.responseDeserialize as (b: Buffer) => SSHStreamResponse,
      metadata,
    );
  }

  /** Validates the address and returns the cached client (created on first use). */
  client(address: string, token: string): grpc.Client {
    const key = `${address}\u0000${token}`;
    let client = this.clients.get(key);
    if (!client) {
      client = new this.service(gitalyTarget(address), grpc.credentials.createInsecure(), {
        'grpc.keepalive_time_ms': this.opts.keepaliveMs,
        'grpc.keepalive_timeout_ms': 20_000,
        'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
        // HTTP/2 receive window towards Gitaly (stream and connection): 64 KiB would cap a
        // clone at one window per round trip.
        'grpc-node.flow_control_window': this.opts.flowControlWindow,
        'grpc.primary_user_agent': this.opts.userAgent,
      });
      this.clients.set(key, client);
    }
    return client;
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}
